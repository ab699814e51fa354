"""Starts the scripted model and `tooltrail serve` in front of it, each on a free loopback port,
with config and data folders of their own; used by test_openai.py."""

import json
import os
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("TOOLTRAIL_BIN_DIR", os.path.join(ROOT, "target", "debug"))
TOKEN = "api-test-token"


def _first_line(process):
    line = process.stdout.readline().decode().strip()
    if not line.startswith("listening on "):
        raise RuntimeError(f"unexpected first line: {line!r}; stderr: {process.stderr.read().decode()}")
    return line[len("listening on "):]


class Stack:
    """`with Stack(replies, "--max-concurrent", "1") as s:` gives s.base_url, s.requests()."""

    def __init__(self, replies, *serve_args):
        self.replies = replies
        self.serve_args = list(serve_args)

    def __enter__(self):
        self.dir = tempfile.TemporaryDirectory()
        d = self.dir.name
        self.workspace = os.path.join(d, "ws")
        os.makedirs(self.workspace)
        with open(os.path.join(self.workspace, "README.md"), "w") as f:
            f.write("# Demo\nA demo project.\n")
        script = os.path.join(d, "script.json")
        with open(script, "w") as f:
            json.dump(self.replies, f)
        self.record = os.path.join(d, "requests.jsonl")
        env = dict(os.environ)
        for name in ["TOOLTRAIL_BASE_URL", "TOOLTRAIL_MODEL", "TOOLTRAIL_API_KEY", "TOOLTRAIL_SERVE_TOKEN"]:
            env.pop(name, None)
        env["TOOLTRAIL_CONFIG_DIR"] = os.path.join(d, "config")
        env["TOOLTRAIL_DATA_DIR"] = os.path.join(d, "data")
        self.model = subprocess.Popen(
            [os.path.join(BIN, "scripted-model"), "--script", script, "--record", self.record],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        model_url = _first_line(self.model)
        self.server = subprocess.Popen(
            [os.path.join(BIN, "tooltrail"), "serve", "--port", "0", "--token", TOKEN,
             "-w", self.workspace, "--base-url", model_url, "--model", "scripted"] + self.serve_args,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.base_url = _first_line(self.server) + "/v1"
        return self

    def requests(self):
        """The chat requests the model received, in order."""
        with open(self.record) as f:
            rows = [json.loads(line) for line in f if line.strip()]
        return [row for row in rows if row.get("path", "").endswith("/chat/completions")]

    def __exit__(self, *exc):
        for process in [self.server, self.model]:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            process.stdout.close()
            process.stderr.close()
        self.dir.cleanup()
