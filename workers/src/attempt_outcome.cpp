#include "attempt_outcome.hpp"

#include <sys/wait.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "child_process.hpp"
#include "lbo/jobs/error.hpp"
#include "lbo/jobs/protocol.hpp"

namespace fs = std::filesystem;

namespace lbo::workers::detail {

namespace {

// Reads a result file; nullopt when it does not exist or is empty.
std::optional<std::string> read_result_file(const fs::path& path, std::string& error) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec || size == 0) return std::nullopt;
  constexpr std::uintmax_t kMaxResultBytes = 16u << 20;
  if (size > kMaxResultBytes) {
    error = "result.json is larger than 16 MiB";
    return std::string();
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The last line of stderr, the trial's folder in it written as $LBO_WORKDIR (a traceback names
// files there): the same failure of many trials reads the same.
std::string stderr_hint(const AttemptEnd& end) {
  std::string line = end.err.last_line(300);
  if (line.empty()) return "";
  const std::string& workdir = end.order.workdir;
  for (std::size_t at = workdir.empty() ? std::string::npos : line.find(workdir); at != std::string::npos;
       at = line.find(workdir, at)) {
    line.replace(at, workdir.size(), "$LBO_WORKDIR");
  }
  return "; stderr: " + line;
}

Outcome failed(TrialStatus status, std::string reason) {
  Outcome o;
  o.status = status;
  o.reason = std::move(reason);
  return o;
}

// An attempt that exited 0: its result, from result.json or else stdout.
Outcome result_of(const AttemptEnd& end) {
  std::string file_error;
  std::optional<std::string> text = read_result_file(fs::path(end.order.workdir) / kResultFile, file_error);
  std::string source = "result.json";
  if (!file_error.empty()) return failed(TrialStatus::failed, file_error);
  if (!text) {
    std::string last = end.out.last_json_line();
    if (last.empty()) {
      return failed(TrialStatus::failed,
                    "no result: write a JSON object to $LBO_RESULT_FILE or print it as the last JSON line of stdout" +
                        stderr_hint(end));
    }
    text = std::move(last);
    source = "stdout";
  }
  const jobs::ParsedResult parsed = jobs::parse_objective_result(*text, end.order.objective_names);
  if (!parsed.result) return failed(TrialStatus::failed, source + ": " + parsed.error);
  Outcome o;
  o.status = TrialStatus::ok;
  o.objective = parsed.result->objective;
  o.values = parsed.result->values;
  o.steps = parsed.result->steps;
  o.metrics_json = parsed.result->metrics_json;
  return o;
}

Outcome objective_outcome(const AttemptEnd& end) {
  if (!end.start_error.empty()) {
    Outcome o = failed(end.start_error_number != 0 ? TrialStatus::lbo_error : TrialStatus::failed, end.start_error);
    o.error_number = end.start_error_number;
    o.path = end.start_error_path;
    return o;
  }
  if (end.stop == Stop::cancel) return failed(TrialStatus::cancelled, "cancelled by lbo");
  if (end.stop == Stop::timeout) {
    std::ostringstream reason;
    reason << "timed out after " << end.order.timeout_s << " s";
    return failed(TrialStatus::timeout, reason.str());
  }
  if (WIFSIGNALED(end.wait_status)) {
    return failed(TrialStatus::crashed, "killed by " + signal_name(WTERMSIG(end.wait_status)) + stderr_hint(end));
  }
  if (const int code = WEXITSTATUS(end.wait_status); code != 0) {
    return failed(TrialStatus::failed, "exit status " + std::to_string(code) + stderr_hint(end));
  }
  return result_of(end);
}

}  // namespace

Outcome outcome_of(const AttemptEnd& end) {
  Outcome o = objective_outcome(end);
  if (o.status != TrialStatus::failed && o.status != TrialStatus::crashed) return o;
  // The trial's folder is lbo's: when lbo itself could not write there during the attempt (a
  // full disk, a read-only remount), the failure is taken for the environment's, not the
  // objective's, and the trial is not charged for it.
  for (const auto& [name, stream] : {std::pair{kStdoutFile, &end.out}, std::pair{kStderrFile, &end.err}}) {
    const int error = stream->write_error();
    if (error == 0 || !IoError::may_pass(error)) continue;
    o.reason = "lbo could not write " + std::string(name) + " during the attempt: " + std::strerror(error) + " (the attempt " +
               std::string(to_string(o.status)) + ": " + o.reason + ")";
    o.path = (fs::path(end.order.workdir) / name).string();
    o.status = TrialStatus::lbo_error;
    o.error_number = error;
    break;
  }
  return o;
}

}  // namespace lbo::workers::detail
