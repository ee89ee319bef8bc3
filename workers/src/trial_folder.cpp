#include "trial_folder.hpp"

#include <fcntl.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "child_process.hpp"
#include "lbo/jobs/error.hpp"

namespace fs = std::filesystem;

namespace lbo::workers::detail {

namespace {

std::string system_error_text(const std::string& what, int error_number) { return what + ": " + system_reason(error_number); }

// A trial's files are opened without following a symbolic link (O_NOFOLLOW), and its folders
// must not be links: one planted in the run directory would have lbo write wherever it points.
constexpr int kWriteFlags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW;

bool is_link(const fs::path& path) {
  std::error_code ec;
  return fs::symlink_status(path, ec).type() == fs::file_type::symlink;
}

std::optional<FolderFailure> link_failure(const fs::path& folder, const std::string& what) {
  if (!is_link(folder)) return std::nullopt;
  return FolderFailure{"cannot use " + what + " " + folder.string() + ": " + system_reason(ELOOP), ELOOP, folder.string()};
}

// params.json, every byte checked (close included: a network filesystem may report a full disk
// only there), so an objective never starts on an empty or short file. 0 or an errno.
int write_params(const fs::path& file, const std::string& params_json) {
  UniqueFd fd(::open(file.c_str(), kWriteFlags, 0644));
  if (fd.get() < 0) return errno;
  const std::string text = params_json + "\n";
  if (!write_all(fd.get(), text.data(), text.size())) return errno;
  if (::close(fd.release()) != 0 && errno != EINTR) return errno;
  return 0;
}

}  // namespace

std::optional<FolderFailure> prepare_trial_folder(const WorkOrder& order, UniqueFd& stdout_file, UniqueFd& stderr_file) {
  const auto file = [&](std::string_view name) { return fs::path(order.workdir) / name; };
  std::error_code ec;
  const fs::path workdir(order.workdir);
  for (const fs::path& folder : {workdir.parent_path(), workdir}) {
    if (auto failure = link_failure(folder, "the trial folder")) return failure;
  }
  fs::create_directories(order.workdir, ec);
  if (ec) return FolderFailure{"cannot create the trial directory: " + ec.message(), ec.value(), order.workdir};
  if (order.attempt > 1) {
    // An earlier lbo killed outright may have left this trial's objective running.
    kill_leftovers(order.workdir);
    // Keep the previous attempt's output beside the new one: stdout.1, stderr.1, ...
    const std::string suffix = "." + std::to_string(order.attempt - 1);
    for (std::string_view name : {kStdoutFile, kStderrFile, kResultFile}) {
      fs::rename(file(name), file(std::string(name) + suffix), ec);
    }
  }
  fs::remove(file(kResultFile), ec);
  for (const EnvVar& var : order.env) {
    if (var.name != kCheckpointDirVar) continue;
    if (auto failure = link_failure(var.value, "the checkpoint folder")) return failure;
    fs::create_directories(var.value, ec);
    if (ec) return FolderFailure{"cannot create the checkpoint folder: " + ec.message(), ec.value(), var.value};
  }
  if (const int error_number = write_params(file(kParamsFile), order.params_json); error_number != 0) {
    return FolderFailure{system_error_text("cannot write " + std::string(kParamsFile), error_number), error_number,
                         file(kParamsFile).string()};
  }
  for (auto [name, fd] : {std::pair{kStdoutFile, &stdout_file}, std::pair{kStderrFile, &stderr_file}}) {
    fd->reset(::open(file(name).c_str(), kWriteFlags, 0644));
    if (fd->get() < 0) {
      const int error_number = errno;
      return FolderFailure{system_error_text("cannot create " + std::string(name), error_number), error_number,
                           file(name).string()};
    }
  }
  return std::nullopt;
}

// The folder of lbo's Python helper (python/lbo_trial.py): share/lbo/python beside the lbo
// that runs, installed (P/bin/lbo → P/share) or built (build/app/lbo, build/tests/x/test_x →
// build/share, where the build copies it); empty when there is none.
namespace {
const std::string& python_helper_dir() {
  static const std::string dir = [] {
    std::error_code ec;
    fs::path at = fs::read_symlink("/proc/self/exe", ec).parent_path();
    if (ec) return std::string();
    for (int up = 0; up < 4 && !at.empty(); ++up, at = at.parent_path()) {
      const fs::path candidate = at / "share" / "lbo" / "python";
      std::error_code missing;
      if (fs::is_regular_file(candidate / "lbo_trial.py", missing)) return candidate.string();
      if (at == at.parent_path()) break;
    }
    return std::string();
  }();
  return dir;
}
}  // namespace

std::vector<std::string> attempt_environment(const WorkOrder& order, const RunnerOptions& options,
                                             const std::string& attempt_id) {
  const auto file = [&](std::string_view name) { return (fs::path(order.workdir) / name).string(); };
  std::vector<EnvVar> vars = order.env;
  vars.push_back({"LBO_PARAMS_FILE", file(kParamsFile)});
  vars.push_back({"LBO_RESULT_FILE", file(kResultFile)});
  vars.push_back({"LBO_WORKDIR", order.workdir});
  vars.push_back({"LBO_ATTEMPT", std::to_string(order.attempt)});
  vars.push_back({"LBO_ATTEMPT_ID", attempt_id});
  vars.push_back({"LBO_RANK", std::to_string(options.rank)});
  vars.push_back({"LBO_SLOT", std::to_string(options.slot)});
  const SlotResources& r = options.resources;
  vars.push_back({"LBO_THREADS", std::to_string(r.threads)});
  vars.push_back({"LBO_GPUS", device_list(r.gpus)});
  if (r.manage_threads) {
    for (const char* name : {"OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"}) {
      vars.push_back({name, std::to_string(r.threads)});
    }
  }
  if (!r.gpus.empty()) {
    vars.push_back({"CUDA_VISIBLE_DEVICES", device_list(r.gpus)});
    vars.push_back({"ROCR_VISIBLE_DEVICES", device_list(r.gpus)});
  }
  // `import lbo_trial` works in every trial; the user's own PYTHONPATH comes after it.
  if (const std::string& helper = python_helper_dir(); !helper.empty()) {
    const char* inherited = std::getenv("PYTHONPATH");
    vars.push_back({"PYTHONPATH", inherited != nullptr && *inherited != '\0' ? helper + ":" + inherited : helper});
  }
  std::vector<std::string> names;
  for (const EnvVar& v : vars) names.push_back(v.name);
  std::vector<std::string> env = inherited_environment(names);
  for (const EnvVar& v : vars) env.push_back(v.name + "=" + v.value);
  return env;
}

}  // namespace lbo::workers::detail
