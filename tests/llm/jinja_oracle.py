#!/usr/bin/env python3
"""The oracle of qmm's Jinja tests: renders templates with jinja2 the way Hugging Face
transformers' apply_chat_template does (ImmutableSandboxedEnvironment with trim_blocks,
lstrip_blocks and loopcontrols; tojson = json.dumps(ensure_ascii=False); raise_exception and
strftime_now globals), with strftime_now pinned to the input's "now".

Usage: jinja_oracle.py CASES.json   where CASES.json is
  {"now": UNIX_TIME, "cases": [{"template": "...", "vars": {...}}, ...]}
Writes, per case, "OK <n>\\n" or "ERR <n>\\n" and then n bytes (the UTF-8 output or the error).
Exit code 3 when jinja2 is missing.
"""
import json
import sys
from datetime import datetime

try:
    import jinja2
    from jinja2 import nodes
    from jinja2.ext import Extension
    from jinja2.sandbox import ImmutableSandboxedEnvironment
except ImportError:
    sys.stderr.write("python3-jinja2 is not installed\n")
    sys.exit(3)


class Generation(Extension):
    """{% generation %}…{% endgeneration %} renders its body, as transformers' AssistantTracker."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.CallBlock(self.call_method("_body"), [], [], body).set_lineno(lineno)

    def _body(self, caller):
        return caller()


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    now = datetime.fromtimestamp(spec["now"])

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols", Generation])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: now.strftime(fmt)

    out = sys.stdout.buffer
    compiled = {}
    for case in spec["cases"]:
        try:
            source = case["template"]
            if source not in compiled:
                compiled[source] = env.from_string(source)
            text, tag = compiled[source].render(**case["vars"]), b"OK"
        except Exception as e:  # every error is an expected outcome to compare
            text, tag = f"{type(e).__name__}: {e}", b"ERR"
        data = text.encode("utf-8", "surrogatepass")
        out.write(tag + b" %d\n" % len(data) + data)
    out.flush()


if __name__ == "__main__":
    main()
