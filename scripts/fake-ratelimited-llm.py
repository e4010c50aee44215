#!/usr/bin/env python3
"""A local OpenAI-compatible server with a request rate limit, for scripts/bench-ratelimit.sh.

It answers POST /v1/chat/completions and /v1/completions (the real wire format, with usage) after
--latency-ms, and enforces --rpm requests per minute as a token bucket of --burst requests
refilled continuously (providers enforce per-minute limits over shorter windows; with the
defaults, 1,200 a minute is 20 a second and at most 20 at once). A request that finds the bucket
empty gets 429 with Retry-After (whole seconds), retry-after-ms and x-ratelimit-limit-requests
(the bucket's size), -remaining-requests and -reset-requests (the time until the bucket is full
again, as OpenAI reports it, e.g. "850ms"); successful replies carry the x-ratelimit-* headers
too. With --silent it says nothing of its limit: a bare 429, and no x-ratelimit-* header on any
reply (as many proxies and self-hosted servers answer). GET /stats answers {"completions": N,
"rejected": N}.

Usage: scripts/fake-ratelimited-llm.py [--rpm 1200] [--burst 20] [--latency-ms 100] [--silent]
Prints the port it listens on (127.0.0.1, chosen by the system) as its first line.
"""
import argparse, json, math, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

parser = argparse.ArgumentParser()
parser.add_argument("--rpm", type=float, default=1200)
parser.add_argument("--burst", type=int, default=20)
parser.add_argument("--latency-ms", type=float, default=100)
parser.add_argument("--silent", action="store_true")
args = parser.parse_args()
rate = args.rpm / 60.0  # requests per second

lock = threading.Lock()
state = {"tokens": float(args.burst), "at": time.monotonic(), "completions": 0, "rejected": 0}


def take():
    """Take one request from the bucket: (allowed, requests left, seconds until one is back)."""
    with lock:
        now = time.monotonic()
        state["tokens"] = min(args.burst, state["tokens"] + (now - state["at"]) * rate)
        state["at"] = now
        allowed = state["tokens"] >= 1.0
        if allowed:
            state["tokens"] -= 1.0
        else:
            state["rejected"] += 1
        return allowed, state["tokens"]


def duration(seconds):
    return f"{max(seconds, 0) * 1000:.0f}ms" if seconds < 1 else f"{seconds:.3f}s"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *_):
        pass

    def reply(self, status, body, headers=()):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/stats":
            with lock:
                stats = {"completions": state["completions"], "rejected": state["rejected"]}
            self.reply(200, stats)
        else:
            self.reply(200, {"object": "list", "data": []})

    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        allowed, tokens = take()
        limits = [] if args.silent else [
            ("x-ratelimit-limit-requests", str(args.burst)),
            ("x-ratelimit-remaining-requests", str(int(tokens))),
            ("x-ratelimit-reset-requests", duration((args.burst - tokens) / rate)),
        ]
        if not allowed:
            wait = (1.0 - tokens) / rate
            announced = [] if args.silent else [("Retry-After", str(math.ceil(wait))),
                                                ("retry-after-ms", str(math.ceil(wait * 1000)))]
            self.reply(429, {"error": {"message": "Rate limit reached for requests", "type": "requests"}},
                       limits + announced)
            return
        time.sleep(args.latency_ms / 1000.0)
        usage = {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
        if self.path.endswith("/chat/completions"):
            choice = {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "4"}}
            kind = "chat.completion"
        else:
            choice = {"index": 0, "finish_reason": "stop", "text": "4"}
            kind = "text_completion"
        with lock:
            state["completions"] += 1
        self.reply(200, {"id": "cmpl-1", "object": kind, "created": int(time.time()),
                         "model": request.get("model", "m"), "choices": [choice], "usage": usage}, limits)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # 64 clients connecting at once


server = Server(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
