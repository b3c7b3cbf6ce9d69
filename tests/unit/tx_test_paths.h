// Where the tests find their data and the built programs, resolved when the test binary runs
// rather than baked in with -D (a per-checkout absolute path on every test object's command line
// made each clone's build a ccache miss). Force-included (CMakeLists.txt: tx_test_paths) into the
// sources of tensorflux_tests, tensorflux_distributed_tests and the benchmarks that use their
// helpers, so TX_TEST_DATA_DIR and TX_BIN_DIR read as before:
//   std::string(TX_TEST_DATA_DIR) + "/tf-graphs/..."     std::string(TX_BIN_DIR) + "/tensorflux"
// Both are `const char*` (not string literals: "..." TX_BIN_DIR concatenation does not work).
//   TX_TEST_DATA_DIR  $TX_TEST_DATA_DIR when set, else the source tree's tests/data, read from
//                     tensorflux_tests.source_dir next to the binary (written by CMake).
//   TX_BIN_DIR        $TX_BIN_DIR when set, else the folder of the running binary (build/bin).
// A missing file or an unreadable /proc/self/exe aborts with a message naming what to set.
#pragma once

#include <string>

namespace tensorflux::test {

const std::string& TestDataDir();
const std::string& BinDir();

}  // namespace tensorflux::test

#define TX_TEST_DATA_DIR (::tensorflux::test::TestDataDir().c_str())
#define TX_BIN_DIR (::tensorflux::test::BinDir().c_str())
