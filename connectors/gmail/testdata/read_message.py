"""Reads an RFC 5322 message with Python's standard MIME parser
(email, policy.default) and prints, as JSON, what a recipient's mail
reader would show: the decoded headers, the body text, each attachment's
file name, type and bytes (base64), and the longest line of the header
sections."""

import base64
import email
import json
import sys
from email import policy

raw = open(sys.argv[1], "rb").read()
msg = email.message_from_bytes(raw, policy=policy.default)


def addresses(name):
    h = msg[name]
    if h is None:
        return []
    return [a.addr_spec for a in h.addresses]


def longest_header_line(data):
    longest = 0
    in_header = True
    for line in data.split(b"\r\n"):
        if line.startswith(b"--countersign-"):
            in_header = True
            continue
        if in_header:
            if line == b"":
                in_header = False
                continue
            longest = max(longest, len(line))
    return longest


out = {
    "to": addresses("To"),
    "cc": addresses("Cc"),
    "bcc": addresses("Bcc"),
    "subject": str(msg["Subject"]) if msg["Subject"] is not None else None,
    "defects": [repr(d) for part in msg.walk() for d in part.defects],
    "longest_header_line": longest_header_line(raw),
    "attachments": [],
}
if msg.is_multipart():
    parts = list(msg.iter_parts())
    out["body"] = parts[0].get_content()
    for p in parts[1:]:
        out["attachments"].append({
            "filename": p.get_filename(),
            "name": p["Content-Type"].params.get("name"),
            "content_type": p.get_content_type(),
            "data": base64.b64encode(p.get_payload(decode=True)).decode("ascii"),
        })
else:
    out["body"] = msg.get_content()
json.dump(out, sys.stdout, ensure_ascii=False)
