// Where the test models are: ${PROJECT_SOURCE_DIR}/../shared/models (see shared/models/README.md).
#pragma once
#include <filesystem>
#include <string>

namespace qmm::test {

inline std::string stories260k_path() { return std::string(QMM_MODELS_DIR) + "/stories260K.gguf"; }
inline bool have_stories260k() { return std::filesystem::exists(stories260k_path()); }

}  // namespace qmm::test

#define QMM_REQUIRE_STORIES260K()                                                                   \
  do {                                                                                             \
    if (!qmm::test::have_stories260k())                                                            \
      GTEST_SKIP() << "model " << qmm::test::stories260k_path() << " is absent (shared/models)";   \
  } while (0)
