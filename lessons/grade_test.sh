#!/usr/bin/env bash
# lessons/grade_test.sh — scripts/grade.sh against fake exercise binaries: shell scripts
# that print what a gtest binary prints when a student's code passes, fails, is banned,
# crashes, prints without a newline, calls an unwritten exercise, or does not compile.
# Each case checks the grader's verdict and exit status. Run by CTest
# (lesson_grader_judges_each_case); needs no build. Usage: grade_test.sh WORK_DIR
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:?usage: grade_test.sh WORK_DIR}"
rm -rf "$work" && mkdir -p "$work/lessons"
failures=0

# fake_binary BODY: lesson 02's exercise binary prints BODY (gtest's console format) and
# exits with the status on BODY's last line if it is "exit N".
fake_binary() {
  local status=1
  printf '%s\n' "$1" > "$work/output.txt"
  if [[ "$(tail -1 "$work/output.txt")" =~ ^exit\ ([0-9]+)$ ]]; then
    status="${BASH_REMATCH[1]}"
    sed -i '$d' "$work/output.txt"
  fi
  printf '#!/bin/sh\ncat "%s"\nexit %s\n' "$work/output.txt" "$status" \
    > "$work/lessons/lesson_02_exercises"
  chmod +x "$work/lessons/lesson_02_exercises"
}

# expect NAME STATUS PATTERN...: the grader's exit status and lines it must print.
expect() {
  local name="$1" want_status="$2"
  shift 2
  local out status
  out="$(bash "$root/scripts/grade.sh" --no-build --build-dir "$work" 02 2>&1)"
  status=$?
  if [[ $status -ne $want_status ]]; then
    echo "FAIL $name: exit status $status, expected $want_status"; failures=$((failures + 1))
  fi
  for pattern in "$@"; do
    if ! grep -qF -- "$pattern" <<< "$out"; then
      echo "FAIL $name: no line with: $pattern"; failures=$((failures + 1))
    fi
  done
  [[ $status -eq $want_status ]] || printf '%s\n' "$out" | sed 's/^/    /'
}

ok() { printf '[ RUN      ] %s\n[       OK ] %s (0 ms)\n' "$1" "$1"; }
failed() { printf '[ RUN      ] %s\n/x/test.cpp:1: Failure\n%s\n[  FAILED  ] %s (0 ms)\n' "$1" "$2" "$1"; }

fake_binary "$(ok Exercise1A.B; ok Exercise2A.B; ok Exercise3A.B; ok Exercise4A.B; ok Lesson02Bans.TheAnswersCallNoBannedFunction)
exit 0"
expect "all pass" 0 "lesson 02 (storage and strides): 4 of 4 exercises pass" "total: 4 of 4"

fake_binary "$(ok Exercise1A.B; failed Exercise2A.B 'Expected equality of these values:'; ok Exercise3A.B; ok Exercise4A.B
failed Lesson02Bans.TheAnswersCallNoBannedFunction 'Which is: "exercise 3 must not call glass::Tensor::copy_(glass::Tensor const&, bool). exercise 4 must not call glass::view_strides(x). "')"
expect "a failure and two bans in one message" 1 "1 of 4 exercises pass" \
  "exercise 2  failed — Exercise2A.B: Expected equality" \
  "exercise 3  failed — exercise 3 must not call glass::Tensor::copy_(glass::Tensor const&, bool)" \
  "exercise 4  failed — exercise 4 must not call glass::view_strides(x)"

fake_binary "$(ok Exercise1A.B; printf '[ RUN      ] Exercise2A.B\n')
exit 139"
expect "a crash" 1 "exercise 1  passed" "exercise 2  crashed — Exercise2A.B never finished" \
  "exercise 3  not run" "exercise 4  not run"

fake_binary "$(printf '[ RUN      ] Exercise1A.B\n/x/t.cpp:1: Failure\nwrong\naddr=5[  FAILED  ] Exercise1A.B (0 ms)\n'; ok Exercise2A.B; ok Exercise3A.B; ok Exercise4A.B)"
expect "a print before the failure marker" 1 "exercise 1  failed"

fake_binary "$(failed Exercise1A.B 'exercise 1: not implemented yet — see README'; ok Exercise2A.B
failed Exercise3A.B 'C++ exception with description "exercise 1: not implemented yet — see README"'; ok Exercise4A.B)"
expect "stubs and a caller of a stub" 1 "exercise 1  not attempted" \
  "exercise 3  failed — it calls exercise 1, which is not written yet"

fake_binary "$(ok Exercise1A.B; ok Exercise2A.B; ok Exercise3A.B; ok Exercise4A.B
failed Lesson02Bans.TheAnswersCallNoBannedFunction 'objdump: cannot open the object file')
exit 1"
expect "a check that names no exercise" 1 "grader error: Lesson02Bans.TheAnswersCallNoBannedFunction"

rm -f "$work/lessons/lesson_02_exercises"
expect "no binary" 1 "0 of 4 exercises pass — it does not compile"

if ((failures)); then echo "$failures check(s) failed"; exit 1; fi
echo "grade.sh judged every case right"
