#!/bin/sh
# make_unit_test.sh NAME "purpose" CASEFILE...: writes tests/unit/test_arc_NAME.c, one cmocka test per case
# file, with the expected values printed by gen_unit_cases.py (run from tests/arc/cases).
name=$1; shift; purpose=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
out=$here/../unit/test_arc_$name.c
{
echo "/* test_arc_$name.c: $purpose"
echo " * Expected values: CPython 3.11 on a Python model of the spec (tests/arc/gen_unit_cases.py regenerates"
echo " * the case lists from the .cases files in tests/arc/cases); \"ERROR\" marks calls that raise in Python. */"
echo '#include "arc_test_util.h"'
echo
tests=""
for f in "$@"; do
  fn=$(basename $f .cases)
  echo "static void test_$fn(void **state) {"
  echo "    (void)state;"
  python3 "$here/gen_unit_cases.py" $f
  echo "}"
  echo
  tests="$tests cmocka_unit_test(test_$fn),"
done
echo "int main(void) {"
echo "    tu_init_seed(\"test_arc_$name\");"
echo "    const struct CMUnitTest tests[] = {$tests};"
echo "    return cmocka_run_group_tests(tests, ta_setup, ta_teardown);"
echo "}"
} > $out
