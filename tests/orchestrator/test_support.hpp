#pragma once
// Helpers shared by the orchestrator tests: a scratch folder and jobs built from text.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "lbo/jobs/job_spec.hpp"

namespace lbo::testing {

/// A fresh folder named after the running test, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("lbo-" + std::string(info->test_suite_name()) + "-" + info->name() + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline jobs::JobSpec job_from(const std::string& text, const std::filesystem::path& dir) {
  return jobs::parse_job(text, dir / "job.toml");
}

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A job running the test objective (value = sum of the numeric parameters): `x` in [0, 1]
/// plus `extra_space`, the given tasks, random search unless `policy` says otherwise.
inline std::string test_job(const std::string& extra_space = "", const std::string& tasks =
                                                                      "[[tasks]]\nname = \"a\"\nbudget = 5\n",
                            const std::string& objective_extra = "", const std::string& policy = "surrogate = \"random\"") {
  return std::string("name = \"t\"\nseed = 3\n[objective]\ncommand = [\"") + LBO_TEST_OBJECTIVE +
         "\"]\ndirection = \"maximize\"\n" + objective_extra + "\n[policy]\n" + policy +
         "\n[space]\nx = { type = \"float\", low = 0, high = 1 }\n" + extra_space + "\n" + tasks;
}

}  // namespace lbo::testing
