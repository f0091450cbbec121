# Sourced by the scripts' argument tests (tests/cli/*_args.sh): expect CODE REGEX -- command...
# runs the command and checks its exit code and that its output matches REGEX, in one line when
# CODE is not 0 (a refusal is one line); a miss prints FAIL and sets fail=1.
fail=0
expect() {
  local code=$1 regex=$2 out rc
  shift 3
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" != "$code" ] || ! grep -Eq "$regex" <<<"$out" || { [ "$code" != 0 ] && [ "$(wc -l <<<"$out")" != 1 ]; }; then
    echo "FAIL: $* -> exit $rc (want $code), output: $out"
    fail=1
  fi
}
