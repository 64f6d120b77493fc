#include "tests/unit/harness.h"
int main(void) { return amc_test_summary("test_goal_dag"); }
