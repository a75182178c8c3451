package main

import "time"

func limitDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
