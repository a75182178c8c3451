package httpapi_test

import "countersign"

func errCode(err error) string { return string(countersign.ErrorCode(err)) }
