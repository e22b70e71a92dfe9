#!/usr/bin/env bash
# scripts/grade.sh — grades your own exercises (each lesson's exercises/student.cpp, or
# student.cu for lesson 09), lesson by lesson, like MiniTorch's task grader:
#
#   scripts/grade.sh            # every lesson
#   scripts/grade.sh 02 05      # lessons 02 and 05
#
# It builds the lessons' exercise tests against student.cpp in build-student/ (its own
# folder: the main build keeps grading the reference, solution.cpp), runs them, and prints
# per lesson how many exercises pass, each exercise's state — passed, not attempted (its
# function still throws "not implemented yet"), failed (with the first failing check), or
# does not compile — and a total.
#
# Options: --build-dir DIR (default build-student, or $GLASS_GRADE_BUILD_DIR),
#          --no-build (grade what DIR already holds; with the main build folder, this
#          grades solution.cpp, which is how the project's tests check this script).
# Exit status: 0 when every graded exercise passed, 1 otherwise, 2 on bad usage.
#
# How a test counts: the test suites and tests named Exercise<N>… are exercise N's (lessons
# 07, 10 and 11 name theirs after the function, mapped below); a ban check failing with
# "exercise N must not call X" fails exercise N; tests named TheGraderRejects… check the
# grader itself, not your code, and are not counted.
set -uo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${GLASS_GRADE_BUILD_DIR:-$root/build-student}"
do_build=1
lessons=()
while (($#)); do
  case "$1" in
    --build-dir) build="${2:?--build-dir needs a folder}"; shift 2 ;;
    --no-build) do_build=0; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    [0-9][0-9]) lessons+=("$1"); shift ;;
    *) echo "grade.sh: unknown argument '$1' (lesson numbers are two digits: 02)" >&2; exit 2 ;;
  esac
done

# Every lesson folder with exercises, or the ones asked for.
declare -A folder
for dir in "$root"/lessons/[0-9][0-9]_*/; do
  [[ -d "$dir/exercises" ]] || continue
  name="$(basename "$dir")"
  folder[${name:0:2}]="$name"
done
if ((${#lessons[@]} == 0)); then
  mapfile -t lessons < <(printf '%s\n' "${!folder[@]}" | sort)
fi
for n in "${lessons[@]}"; do
  [[ -n "${folder[$n]:-}" ]] || { echo "grade.sh: there is no lesson $n with exercises" >&2; exit 2; }
done

if ((do_build)); then
  echo "Building the exercise tests against your student files in $build ..."
  mkdir -p "$build"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGLASS_EXERCISES=student \
    -DGLASS_BUILD_BENCH=OFF > "$build/grade-configure.log" 2>&1 ||
    { cat "$build/grade-configure.log"; echo "grade.sh: configuring failed" >&2; exit 1; }
  targets=()
  for n in "${lessons[@]}"; do
    targets+=("lesson_${n}_exercises")
    # A build that fails leaves the last good binary behind: it must not be graded.
    rm -f "$build/lessons/lesson_${n}_exercises"
  done
  # -k 0: one student file that does not compile must not stop the others.
  cmake --build "$build" --target "${targets[@]}" -- -k 0 > "$build/grade-build.log" 2>&1
fi

# The suites of lessons that name them after the function rather than Exercise<N>.
suite_exercise() {  # lesson suite -> exercise number, or nothing
  case "$1:$2" in
    07:NodesPerModule) echo 1 ;; 07:LargestGradientNode) echo 2 ;;
    10:Lesson10Ring) echo 1 ;; 10:Lesson10Hooks) echo 2 ;; 10:Lesson10Sampler) echo 3 ;;
    11:Lesson11ShardRows) echo 1 ;; 11:Lesson11ReduceScatter) echo 2 ;;
    11:Lesson11ShardForward) echo 3 ;;
  esac
}

total_passed=0 total=0 trouble=0
for n in "${lessons[@]}"; do
  name="${folder[$n]}"
  title="${name:3}"
  title="${title//_/ }"
  binary="$build/lessons/lesson_${n}_exercises"
  # How many exercises the lesson has: its contract's "// Exercise N —" headings.
  max="$(grep -cE '^// Exercise [0-9]+ ' "$root/lessons/$name/exercises/exercises.h")"
  total=$((total + max))
  echo
  if [[ ! -x "$binary" ]]; then
    # Its files did not compile or link: the first errors for this lesson.
    echo "lesson $n ($title): 0 of $max exercises pass — it does not compile"
    { grep -A3 "lessons/$name/exercises/.*error" "$build/grade-build.log" 2>/dev/null ||
      grep -m8 -E "error|undefined reference" "$build/grade-build.log" 2>/dev/null; } |
      head -12 | sed 's/^/    /'
    trouble=1
    continue
  fi
  # One line per test: suite, test, ok|failed|crashed, and its failure text (every
  # failure's lines, joined by " / "). A test that started and never finished crashed the
  # binary (or ran past the timeout). Result markers are matched anywhere on a line: a
  # student's print without a newline may precede them.
  out="$(timeout 900 "$binary" --gtest_color=no 2>&1)"
  status=$?
  results="$(printf '%s\n' "$out" | awk '
    /\[ RUN      \] / { sub(/.*\[ RUN      \] /, ""); split($1, t, "."); suite = t[1];
                        test = t[2]; msg = ""; running = 1; next }
    /\[       OK \] / { if (running) print suite "\t" test "\tok\t"; running = 0; next }
    /\[  FAILED  \] .*\(/ { if (running) print suite "\t" test "\tfailed\t" msg; running = 0;
                             next }
    running && NF > 0 && !/: Failure$/ { gsub(/\t/, " "); msg = msg (msg == "" ? "" : " / ") $0 }
    END { if (running) print suite "\t" test "\tcrashed\t" msg }')"
  declare -A state=() why=()
  crashed=""
  while IFS=$'\t' read -r suite test result message; do
    [[ -z "$suite" ]] && continue
    [[ "$test" == TheGraderRejects* || "$test" == TheSymbolCheck* || "$test" == TheRingCheck* ]] &&
      { [[ "$result" == ok ]] || { echo "  grader error: $suite.$test failed: ${message:0:300}"; trouble=1; }; continue; }
    ex=""
    if [[ "$suite$test" =~ Exercise([0-9]+) ]]; then ex="${BASH_REMATCH[1]}"; fi
    [[ -z "$ex" ]] && ex="$(suite_exercise "$n" "$suite")"
    if [[ -z "$ex" ]]; then
      # A ban or source check: it names each exercise whose code called what it must not.
      [[ "$result" == ok ]] && continue
      bans="$(sed 's/\. exercise /.\nexercise /g' <<< "$message" |
        grep -oE 'exercise [0-9]+ must not call [^/]*' | sed 's/[ ."]*$//')"
      if [[ -z "$bans" ]]; then
        echo "  grader error: $suite.$test ${result}: ${message:0:300}"
        trouble=1
        continue
      fi
      while read -r ban; do
        e="$(awk '{print $2}' <<< "$ban")"
        [[ "${state[$e]:-passed}" == passed || "${state[$e]}" == failed ]] || continue
        state[$e]=failed
        why[$e]="${why[$e]:+${why[$e]}; }$ban"
      done <<< "$bans"
      continue
    fi
    [[ -z "${state[$ex]:-}" ]] && state[$ex]=passed
    case "$result" in
      crashed)
        state[$ex]=crashed
        why[$ex]="$suite.$test never finished (a crash, or past the timeout): ${message:0:200}"
        crashed=$ex ;;
      failed)
        if [[ "$message" == *"exercise $ex: not implemented yet"* ]]; then
          [[ "${state[$ex]}" == passed ]] && state[$ex]="not attempted"
        elif [[ "${state[$ex]}" == passed || "${state[$ex]}" == "not attempted" ]]; then
          state[$ex]=failed
          if [[ "$message" =~ exercise\ ([0-9]+):\ not\ implemented\ yet ]]; then
            why[$ex]="it calls exercise ${BASH_REMATCH[1]}, which is not written yet"
          else
            why[$ex]="$suite.$test: $message"
          fi
        fi ;;
    esac
  done <<< "$results"
  if [[ -z "$crashed" && $status -ne 0 && $status -ne 1 ]]; then
    echo "  the test program ended with status $status (a crash, or past the timeout)"
    trouble=1
  fi
  passed=0
  for ((e = 1; e <= max; e++)); do [[ "${state[$e]:-}" == passed ]] && passed=$((passed + 1)); done
  echo "lesson $n ($title): $passed of $max exercises pass"
  for ((e = 1; e <= max; e++)); do
    case "${state[$e]:-}" in
      passed) echo "  exercise $e  passed" ;;
      "not attempted") echo "  exercise $e  not attempted" ;;
      failed) echo "  exercise $e  failed — ${why[$e]:0:300}" ;;
      crashed) echo "  exercise $e  crashed — ${why[$e]:0:300}" ;;
      *) echo "  exercise $e  not run (the test program stopped before its tests)"; trouble=1 ;;
    esac
  done
  total_passed=$((total_passed + passed))
  unset state why
done
echo
echo "total: $total_passed of $total exercises pass"
((total_passed == total && trouble == 0))
