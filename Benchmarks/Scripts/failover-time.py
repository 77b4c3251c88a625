#!/usr/bin/env python3
"""Failover time: a primary host (a `soak --durability everyCommit` writer and `replicate`, default
10 s lease) and a standby (`follow --failover`). The primary host dies: writer and shipper are
SIGKILLed together. On the standby, as soon as it logs "promoted", a writer (`soak DIR
--durability everyCommit`) is started, and started again until it can open the store (exit 75
while the follower still holds the writer lock).
Measured from the kill: the standby's "promoted" line, the first generation of term 2 in the
bucket, the first commit the standby's writer acknowledged ("committed E" on its stdout).
Loss window: epochs the primary's writer acknowledged ("committed E" lines) above the last epoch
shipped in term 1 (the top-level `lastEpoch` of the term-1 generations, inclusive).

The primary's writer's output is drained as it comes (a full pipe would stop it committing), and
the writer is killed with the shipper, as in a host's crash.

Needs the gateway (`.ci/ceph-rgw-start DIR`, then `source DIR/s3.env`), boto3, and a release build
(`swift build -c release --product statejournal`; SJ_BIN names another binary).
Usage: Benchmarks/Scripts/failover-time.py RUNS [OUTDIR]"""
import boto3, json, os, signal, subprocess, sys, time, shutil, threading, statistics
BIN = os.environ.get("SJ_BIN", ".build/release/statejournal")
ep = os.environ["S3_ENDPOINT"]; s3 = boto3.client("s3", endpoint_url=ep)
env = dict(os.environ, AWS_ENDPOINT_URL=ep)
runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
out = sys.argv[2] if len(sys.argv) > 2 else "failover-runs"
os.makedirs(out, exist_ok=True)
import tempfile
work = tempfile.mkdtemp(prefix="statejournal-failover-")
cache = {}
def gens(bucket, prefix):
    res = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix + "/generations/"):
        for o in page.get("Contents", []):
            k = o["Key"]
            if k not in cache:
                b = s3.get_object(Bucket=bucket, Key=k)["Body"].read(); i = b.find(b'{"')
                cache[k] = json.JSONDecoder().raw_decode(b[i:].decode("latin-1"))[0]
            res.append(cache[k])
    return res

class Lines(threading.Thread):
    """Drains a pipe line by line into a file, with the monotonic time each line arrived."""
    def __init__(self, pipe, path, watch=None):
        super().__init__(daemon=True); self.pipe, self.f, self.watch = pipe, open(path, "w"), watch
        self.first = None; self.last = None; self.count = 0; self.seen = None; self.seen_line = None
        self.start()
    def run(self):
        for line in self.pipe:
            t = time.monotonic(); self.f.write(f"{t:.4f} {line}"); self.f.flush()
            if line.startswith("committed ") and line.endswith("\n"):
                e = int(line.split()[1]); self.count += 1
                if self.first is None: self.first = (t, e)
                self.last = (t, e)
            if self.watch and self.seen is None and self.watch in line:
                self.seen = t; self.seen_line = line.strip()

results = []
for run in range(runs):
    cache.clear()
    bucket = f"failover-{int(time.time())}-{run}"; s3.create_bucket(Bucket=bucket)
    d = f"{work}/{run}"; os.makedirs(d); o = f"{out}/{run}"; os.makedirs(o, exist_ok=True)
    subprocess.run([BIN, "soak", f"{d}/p", "--seconds", "0.5", "--objects", "12"], capture_output=True, check=True)
    writer = subprocess.Popen([BIN, "soak", f"{d}/p", "--seconds", "600", "--objects", "12", "--durability", "everyCommit"],
                              stdout=subprocess.PIPE, stderr=open(f"{o}/primary-writer.err", "w"), text=True)
    wlines = Lines(writer.stdout, f"{o}/primary-writer.out")
    primary = subprocess.Popen([BIN, "replicate", f"{d}/p", "--to", f"s3://{bucket}/r"], env=env, stderr=open(f"{o}/primary.log", "w"))
    time.sleep(3)
    standby = subprocess.Popen([BIN, "follow", f"s3://{bucket}/r", "--into", f"{d}/s", "--failover"], env=env,
                               stderr=subprocess.PIPE, text=True)
    slines = Lines(standby.stderr, f"{o}/standby.log", watch="promoted")
    time.sleep(5)
    # the primary host dies: its writer and its shipper at once
    os.kill(writer.pid, signal.SIGKILL); os.kill(primary.pid, signal.SIGKILL)
    killed = time.monotonic(); killed_wall = time.time()
    writer.wait(); primary.wait(); wlines.join(5)
    acked = wlines.last[1]; rate = (wlines.last[1] - wlines.first[1]) / (wlines.last[0] - wlines.first[0])
    # the standby host: its app starts once the follower says it is the primary
    while slines.seen is None and time.monotonic() - killed < 60: time.sleep(0.005)
    promoted = slines.seen - killed if slines.seen else None
    attempts = 0; sw = None; sl = None
    while time.monotonic() - killed < 60:
        attempts += 1
        sw = subprocess.Popen([BIN, "soak", f"{d}/s", "--seconds", "2", "--objects", "12", "--durability", "everyCommit"],
                              stdout=subprocess.PIPE, stderr=open(f"{o}/standby-writer.err", "a"), text=True)
        sl = Lines(sw.stdout, f"{o}/standby-writer.out")
        while sw.poll() is None and sl.first is None: time.sleep(0.002)
        if sl.first is not None: break
        sw.wait()
        if sw.returncode != 75: print(f"run {run}: standby writer exited {sw.returncode}", flush=True)
        time.sleep(0.01)
    first_commit = sl.first[0] - killed if sl and sl.first else None
    standby_first_epoch = sl.first[1] if sl and sl.first else None
    # the first generation of term 2 in the bucket (polled; and its own writtenMilliseconds)
    new_term = None; g2 = None
    while time.monotonic() - killed < 60:
        g = gens(bucket, "r"); t2 = [x for x in g if x.get("term") == 2]
        if t2: new_term = time.monotonic() - killed; g2 = min(t2, key=lambda x: x["generation"]); break
        time.sleep(0.1)
    if sw: sw.wait()
    time.sleep(1.5)
    g = gens(bucket, "r")
    shipped = max(x["lastEpoch"] for x in g if x.get("term") == 1)
    standby.send_signal(signal.SIGTERM); standby.wait(); slines.join(5)
    r = dict(run=run, bucket=bucket, promoted=promoted, term2_polled=new_term,
             term2_written=(g2["writtenMilliseconds"] / 1000 - killed_wall) if g2 else None,
             term2_generation=g2 and {k: v for k, v in g2.items() if k != "files"},
             first_commit=first_commit, writer_attempts=attempts, standby_first_epoch=standby_first_epoch,
             acked=acked, shipped_term1=shipped, loss=acked - shipped, primary_rate=rate,
             primary_commits=wlines.count, promoted_line=slines.seen_line, standby_exit=standby.returncode)
    results.append(r); json.dump(r, open(f"{o}/result.json", "w"), indent=1)
    f = lambda x: f"{x:.2f}" if x is not None else "none"
    print(f"run {run}: promoted {f(promoted)} s, term 2 in bucket {f(new_term)} s (written {f(r['term2_written'])} s), "
          f"first commit on standby {f(first_commit)} s ({attempts} attempts, epoch {standby_first_epoch}); "
          f"acked {acked}, shipped in term 1 {shipped}: loss window {acked - shipped} epochs; primary {rate:.0f} commits/s", flush=True)
json.dump(results, open(f"{out}/results.json", "w"), indent=1)
def pw(key):
    v = sorted(r[key] for r in results if r[key] is not None)
    return f"p50 {statistics.median(v):.2f} s, worst {v[-1]:.2f} s, best {v[0]:.2f} s (n={len(v)})" if v else "none"
for k in ("promoted", "term2_written", "term2_polled", "first_commit"): print(f"{k}: {pw(k)}")
L = [r["loss"] for r in results]
print(f"loss window epochs: min {min(L)}, median {statistics.median(L)}, max {max(L)}: {L}")
R = [r["primary_rate"] for r in results]
print(f"primary commit rate: median {statistics.median(R):.0f}/s, min {min(R):.0f}, max {max(R):.0f}")
