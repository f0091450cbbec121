// qmm serve in a build without cpp-httplib / nlohmann-json (e.g. the Arm cross build).
#include "core/error.h"
#include "verbs.h"

namespace qmm::cli {

int cmd_serve(int, char**) {
  fail(Status::unsupported, "this build has no HTTP server (cpp-httplib and nlohmann-json were not found at configure time)");
}

}  // namespace qmm::cli
