#!/usr/bin/env python3
"""Does scraping qmm serve's /metrics cost decode speed? Paired rounds on one server.

Starts `qmm serve --metrics` on MODEL, then alternates rounds without and with a scraper
(GET /metrics every 1/HZ s on its own connection): each round is one streamed completion of
TOKENS tokens (ignore_eos), timed from its first token to its last on the client, and the
server's CPU time per token over the round (the scrapes' CPU included). The order
within a pair alternates (AB, BA, ...), so a drift of the shared machine falls on both sides.
Prints each pair, the median ratio with/without, and the median time of one scrape; then the
server's CPU time per scrape (2000 scrapes on an idle server, /proc/PID/stat) against its CPU
time per decoded token, which a noisy shared machine does not blur.

  scripts/bench_metrics_scrape.py QMM MODEL [--pairs 10] [--tokens 64] [--hz 1] [-t 1]
"""
import argparse
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import threading
import time


def stream_round(port, tokens):
    """Decode tokens/s of one streamed completion (first token -> last)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    body = json.dumps({"prompt": "Once upon a time", "max_tokens": tokens, "ignore_eos": True,
                       "temperature": 0, "stream": True})
    c.request("POST", "/v1/completions", body, {"Content-Type": "application/json"})
    r = c.getresponse()
    if r.status != 200:
        sys.exit("round failed: %d %s" % (r.status, r.read()[:200]))
    first = last = None
    n = 0
    for line in r:
        if not line.startswith(b"data: {"):
            continue
        j = json.loads(line[6:])
        if j["choices"] and j["choices"][0].get("text"):
            now = time.perf_counter()
            first = first or now
            last = now
            n += 1
    c.close()
    return (n - 1) / (last - first)


class Scraper(threading.Thread):
    def __init__(self, port, hz):
        super().__init__(daemon=True)
        self.port, self.period, self.stop, self.times = port, 1.0 / hz, threading.Event(), []

    def run(self):
        while not self.stop.is_set():
            t0 = time.perf_counter()
            c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
            c.request("GET", "/metrics")
            body = c.getresponse().read()
            c.close()
            self.times.append(time.perf_counter() - t0)
            assert b"llamacpp:tokens_predicted_total" in body
            self.stop.wait(max(0.0, self.period - (time.perf_counter() - t0)))


def cpu_seconds(pid):
    """User + system CPU time of a process, all its threads."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("qmm")
    ap.add_argument("model")
    ap.add_argument("--pairs", type=int, default=10)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--hz", type=float, default=1.0)
    ap.add_argument("-t", "--threads", default="1")
    a = ap.parse_args()
    srv = subprocess.Popen([a.qmm, "serve", "-m", a.model, "--port", "0", "-t", a.threads, "-np", "1",
                            "-c", "512", "--metrics"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    port = None
    for line in srv.stdout:
        m = re.search(r"on http://127\.0\.0\.1:(\d+)", line)
        if m:
            port = int(m.group(1))
            break
    if not port:
        sys.exit("qmm serve did not start")
    threading.Thread(target=lambda: [None for _ in srv.stdout], daemon=True).start()
    try:
        stream_round(port, 8)  # warm-up
        ratios, cpu_ratios, scrape_s, without = [], [], [], []
        for i in range(a.pairs):
            got, cpu = {}, {}
            for scraped in ((False, True) if i % 2 == 0 else (True, False)):
                s = Scraper(port, a.hz) if scraped else None
                if s:
                    s.start()
                c0 = cpu_seconds(srv.pid)
                got[scraped] = stream_round(port, a.tokens)
                cpu[scraped] = (cpu_seconds(srv.pid) - c0) / a.tokens
                if s:
                    s.stop.set()
                    s.join()
                    scrape_s += s.times
            ratios.append(got[True] / got[False])
            cpu_ratios.append(cpu[True] / cpu[False])
            without.append(got[False])
            print("pair %2d: without %.2f tok/s, with %.2f tok/s, ratio %.4f; server CPU per token %.2f / %.2f ms, ratio %.4f"
                  % (i + 1, got[False], got[True], ratios[-1], 1e3 * cpu[False], 1e3 * cpu[True], cpu_ratios[-1]))
        print("median ratio with/without a %.3g Hz scraper: %.4f (min %.4f, max %.4f) over %d pairs" %
              (a.hz, statistics.median(ratios), min(ratios), max(ratios), len(ratios)))
        print("median server CPU per decoded token with/without: %.4f (min %.4f, max %.4f)" %
              (statistics.median(cpu_ratios), min(cpu_ratios), max(cpu_ratios)))
        print("scrapes: %d, median %.3f ms each (client side, new connection)" %
              (len(scrape_s), 1e3 * statistics.median(scrape_s)))
        def cpu_per_request(path, n=2000):
            c0 = cpu_seconds(srv.pid)
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            for _ in range(n):
                conn.request("GET", path)
                conn.getresponse().read()
            conn.close()
            return (cpu_seconds(srv.pid) - c0) / n
        per_scrape = cpu_per_request("/metrics")
        print("server CPU: %.1f us per GET /metrics, %.1f us per GET /health (the cost of any request)"
              % (1e6 * per_scrape, 1e6 * cpu_per_request("/health")))
        c0 = cpu_seconds(srv.pid)
        stream_round(port, a.tokens)
        per_token = (cpu_seconds(srv.pid) - c0) / a.tokens
        print("server CPU: %.1f us per scrape, %.2f ms per decoded token: a %.3g Hz scraper takes %.4f %% of one"
              " core, %.4f %% of the CPU time that decoding at the median rate (%.2f tok/s) takes"
              % (1e6 * per_scrape, 1e3 * per_token, a.hz, 100 * per_scrape * a.hz,
                 100 * per_scrape * a.hz / (per_token * statistics.median(without)), statistics.median(without)))
    finally:
        srv.terminate()
        srv.wait()


if __name__ == "__main__":
    main()
