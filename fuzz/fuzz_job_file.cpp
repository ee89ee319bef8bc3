// Fuzzes the job-file parser: any text either parses or is rejected with an InputError (the one
// exception parse_job documents); anything else escapes and libFuzzer reports it.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string_view>

#include "lbo/jobs/error.hpp"
#include "lbo/jobs/job_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // Relative paths in the job (datasets, watch folders, the objective) resolve against this
  // folder, which need not exist: the parser only looks files up.
  static const std::filesystem::path kPath = std::filesystem::temp_directory_path() / "lbo-fuzz" / "job.toml";
  try {
    const lbo::jobs::JobSpec job = lbo::jobs::parse_job(text, kPath);
    (void)job.total_budget();
  } catch (const lbo::InputError&) {
  }
  return 0;
}
