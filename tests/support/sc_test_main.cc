// Test entry point for suites that use SystemC. ctest runs every TEST in its own
// process (gtest_discover_tests), because SystemC elaborates once per process and
// cannot restart after sc_stop. SystemC warnings and errors fail the test.
#include <gtest/gtest.h>

#include <cstdlib>
#include <systemc>

namespace {

void fail_on_report(const sc_core::sc_report& report, const sc_core::sc_actions& actions) {
  if (report.get_severity() >= sc_core::SC_WARNING) {
    ADD_FAILURE() << "SystemC " << (report.get_severity() == sc_core::SC_WARNING ? "warning" : "error")
                  << " [" << report.get_msg_type() << "]: " << report.get_msg();
  }
  sc_core::sc_report_handler::default_handler(report, actions & ~sc_core::SC_STOP & ~sc_core::SC_ABORT);
  if (report.get_severity() >= sc_core::SC_ERROR) throw report;
}

}  // namespace

int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  sc_core::sc_report_handler::set_handler(fail_on_report);
  return RUN_ALL_TESTS();
}

int main(int argc, char** argv) {
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  return sc_core::sc_elab_and_sim(argc, argv);
}
