#include "lbo/orchestrator/deadline.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "lbo/jobs/error.hpp"
#include "lbo/workers/command.hpp"

namespace lbo::orchestrator {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// "12", "12.5": a non-negative decimal number, the whole of `s`.
std::optional<double> decimal(std::string_view s) {
  if (s.empty() || s.front() == '.' || s.back() == '.') return std::nullopt;
  if (s.find_first_not_of("0123456789.") != std::string_view::npos || std::count(s.begin(), s.end(), '.') > 1) {
    return std::nullopt;
  }
  return std::strtod(std::string(s).c_str(), nullptr);
}

// `count` digits at `pos` as a number; advances `pos`.
std::optional<int> digits(std::string_view s, std::size_t& pos, std::size_t count) {
  if (pos + count > s.size()) return std::nullopt;
  int value = 0;
  for (std::size_t i = pos; i < pos + count; ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    value = value * 10 + (s[i] - '0');
  }
  pos += count;
  return value;
}

bool take(std::string_view s, std::size_t& pos, char c) {
  if (pos >= s.size() || s[pos] != c) return false;
  ++pos;
  return true;
}

// ":SS[.fff]" after its colon: the seconds and their fraction; false (with `error`) when malformed.
bool parse_seconds(std::string_view s, std::size_t& pos, std::optional<int>& second, double& fraction, std::string& error) {
  second = digits(s, pos, 2);
  if (!second) {
    error = "the seconds are not two digits";
    return false;
  }
  if (take(s, pos, '.') || take(s, pos, ',')) {
    const std::size_t start = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
    if (pos == start) {
      error = "a decimal point without digits";
      return false;
    }
    fraction = std::strtod(("0." + std::string(s.substr(start, pos - start))).c_str(), nullptr);
  }
  return true;
}

struct Zone {
  int offset_s = 0;  // east of UTC
};

// "Z" or "±HH[:MM]" at `pos`: the zone, null without one (local time); `error` when malformed.
std::optional<Zone> parse_zone(std::string_view s, std::size_t& pos, std::string& error) {
  if (take(s, pos, 'Z') || take(s, pos, 'z')) return Zone{};
  if (pos >= s.size() || (s[pos] != '+' && s[pos] != '-')) return std::nullopt;
  const int sign = s[pos] == '-' ? -1 : 1;
  ++pos;
  const auto zone_hours = digits(s, pos, 2);
  std::optional<int> zone_minutes = 0;
  if (zone_hours && pos < s.size()) {
    take(s, pos, ':');
    zone_minutes = digits(s, pos, 2);
  }
  if (!zone_hours || !zone_minutes || *zone_hours > 23 || *zone_minutes > 59) {
    error = "the zone is not Z or ±HH:MM";
    return std::nullopt;
  }
  return Zone{sign * (*zone_hours * 3600 + *zone_minutes * 60)};
}

// An ISO-8601 date-time, YYYY-MM-DD[T ]HH:MM[:SS[.fff]][Z|±HH[:MM]], as unix seconds: local
// time without a zone. Empty `error` on success.
double parse_date_time(std::string_view s, std::string& error) {
  std::size_t pos = 0;
  const auto year = digits(s, pos, 4);
  const bool date = year && take(s, pos, '-');
  const auto month = date ? digits(s, pos, 2) : std::nullopt;
  const auto day = month && take(s, pos, '-') ? digits(s, pos, 2) : std::nullopt;
  if (!day) {
    error = "not a time";
    return 0;
  }
  if (!take(s, pos, 'T') && !take(s, pos, ' ')) {
    error = "a date needs its time of day (e.g. " + std::string(s.substr(0, pos)) + "T03:00:00)";
    return 0;
  }
  const auto hour = digits(s, pos, 2);
  const auto minute = hour && take(s, pos, ':') ? digits(s, pos, 2) : std::nullopt;
  if (!minute) {
    error = "the time of day is not HH:MM or HH:MM:SS";
    return 0;
  }
  std::optional<int> second = 0;
  double fraction = 0;
  if (take(s, pos, ':') && !parse_seconds(s, pos, second, fraction, error)) return 0;
  const std::optional<Zone> zone = parse_zone(s, pos, error);
  if (!error.empty()) return 0;
  if (pos != s.size()) {
    error = "unexpected \"" + std::string(s.substr(pos)) + "\" after the time";
    return 0;
  }
  if (*month < 1 || *month > 12 || *day < 1 || *hour > 23 || *minute > 59 || *second > 60) {
    error = "no such date or time of day";
    return 0;
  }
  std::tm fields{};
  fields.tm_year = *year - 1900;
  fields.tm_mon = *month - 1;
  fields.tm_mday = *day;
  fields.tm_hour = *hour;
  fields.tm_min = *minute;
  fields.tm_sec = *second;
  // timegm normalizes: a day that does not exist in its month (02-30) comes back as another.
  std::tm check = fields;
  const std::time_t as_utc = ::timegm(&check);
  if (check.tm_mday != *day || check.tm_mon != *month - 1) {
    error = "no such date";
    return 0;
  }
  if (zone) return static_cast<double>(as_utc) - zone->offset_s + fraction;
  fields.tm_isdst = -1;
  const std::time_t local = std::mktime(&fields);
  if (local == static_cast<std::time_t>(-1)) {
    error = "not a local time";
    return 0;
  }
  return static_cast<double>(local) + fraction;
}

// "+3600", "+90m", "+2h", "+1h30m", "+1h30m15s": units in that order, each once.
std::optional<double> parse_duration(std::string_view s) {
  if (const auto plain = decimal(s)) return plain;
  double total = 0;
  std::size_t pos = 0;
  std::string_view units = "hms";
  const double unit_seconds[] = {3600, 60, 1};
  if (s.empty()) return std::nullopt;
  while (pos < s.size()) {
    const std::size_t end = s.find_first_not_of("0123456789.", pos);
    if (end == std::string_view::npos || end == pos) return std::nullopt;
    const auto number = decimal(s.substr(pos, end - pos));
    const std::size_t unit = units.find(s[end]);
    if (!number || unit == std::string_view::npos) return std::nullopt;
    total += *number * unit_seconds[3 - units.size() + unit];
    units.remove_prefix(unit + 1);
    pos = end + 1;
  }
  return total;
}

// "--deadline tomorrow", "LBO_DEADLINE=tomorrow".
std::string quoted(std::string_view what, std::string_view text) {
  return std::string(what) + (what.substr(0, 1) == "-" ? " " : "=") + std::string(text);
}

// "340", "12.5", "0.35": seconds as a person reads them.
std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof text, s >= 100 ? "%.0f" : "%.3g", s);
  return text;
}

std::string basis_of(std::size_t n, bool pooled) {
  std::string text = n >= 10 ? "90th percentile of " + std::to_string(n) + " trials"
                     : n >= 2 ? "longest of " + std::to_string(n) + " trials"
                              : std::string("1 trial");
  return pooled ? text + " of all tasks" : text;
}

}  // namespace

double parse_deadline(std::string_view text, double now, std::string_view what) {
  const std::string_view s = trim(text);
  std::string error;
  double when = 0;
  if (s.empty()) {
    error = "empty";
  } else if (s.front() == '+') {
    if (const auto duration = parse_duration(s.substr(1))) {
      when = now + *duration;
    } else {
      error = "not a duration";
    }
  } else if (const auto unix_seconds = decimal(s)) {
    when = *unix_seconds;
  } else {
    when = parse_date_time(s, error);
  }
  if (error.empty() && !(when > now)) {
    error = "is not in the future (" + format_utc(when) + "; now is " + format_utc(now) + ")";
  }
  if (!error.empty()) throw InputError(quoted(what, text) + ": " + error + "; a deadline is " + std::string(kDeadlineForms));
  return when;
}

std::optional<double> parse_squeue_end_time(std::string_view text) {
  const std::string_view s = trim(text);
  std::string lower(s);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "n/a" || lower == "unknown" || lower == "none") return std::nullopt;
  std::string error;
  const double when = parse_date_time(s, error);
  if (!error.empty()) throw Error("\"" + std::string(s) + "\" is not an end time (" + error + ")");
  return when;
}

std::string format_utc(double unix_time) {
  const auto t = static_cast<std::time_t>(std::floor(unix_time));
  std::tm utc{};
  gmtime_r(&t, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

DeadlineSearch find_deadline(const std::optional<std::string>& option, double now, std::chrono::milliseconds squeue_timeout) {
  DeadlineSearch found;
  if (option) {
    found.deadline = Deadline{parse_deadline(*option, now, "--deadline"), "--deadline"};
    return found;
  }
  // An empty variable is an unset one: `LBO_DEADLINE= lbo run ...` turns it off.
  if (const char* value = std::getenv("LBO_DEADLINE"); value != nullptr && *value != '\0') {
    found.deadline = Deadline{parse_deadline(value, now, "LBO_DEADLINE"), "LBO_DEADLINE"};
    return found;
  }
  const char* job_id = std::getenv("SLURM_JOB_ID");
  if (job_id == nullptr || *job_id == '\0') return found;
  if (const char* value = std::getenv("SLURM_JOB_END_TIME"); value != nullptr && *value != '\0') {
    const auto end = decimal(trim(value));
    if (end && *end > 0) {
      found.deadline = Deadline{*end, "SLURM_JOB_END_TIME"};
      return found;
    }
    found.warnings.push_back(std::string("SLURM_JOB_END_TIME=") + value + " is not unix seconds; asking squeue");
  }
  const std::vector<std::string> argv = {"squeue", "-h", "-j", job_id, "-o", "%e"};
  const std::string command = "squeue -h -j " + std::string(job_id) + " -o %e";
  const workers::CommandOutput answer = workers::run_captured(argv, squeue_timeout);
  const std::string_view output = trim(answer.output);
  const std::string said = output.empty() ? "" : " (it said \"" + std::string(output.substr(0, 200)) + "\")";
  if (!answer.error.empty()) {
    found.warnings.push_back(command + " " + answer.error + said +
                             ": no deadline; lbo stops only on a signal (set LBO_DEADLINE or pass --deadline)");
    return found;
  }
  try {
    if (const auto end = parse_squeue_end_time(output)) {
      found.deadline = Deadline{*end, "squeue"};
    } else {
      found.notes.push_back("SLURM job " + std::string(job_id) + " has no end time (" + command + ": " + std::string(output) +
                            "): no deadline");
    }
  } catch (const Error& e) {
    found.warnings.push_back(command + ": " + e.what() + ": no deadline; lbo stops only on a signal (set LBO_DEADLINE or "
                             "pass --deadline)");
  }
  return found;
}

// ---- TrialDurations -------------------------------------------------------------------------

bool TrialDurations::counts(workers::TrialStatus status) {
  switch (status) {
    case workers::TrialStatus::ok:
    case workers::TrialStatus::failed:
    case workers::TrialStatus::timeout:
    case workers::TrialStatus::crashed:
      return true;
    case workers::TrialStatus::cancelled:
    case workers::TrialStatus::lbo_error:
    case workers::TrialStatus::stopped:  // cut short: no measure of a whole trial
    case workers::TrialStatus::paused:
      return false;
  }
  return false;
}

double TrialDurations::percentile_90(std::vector<double> durations) {
  // Nearest rank: the ⌈0.9 n⌉-th smallest, ⌈9n/10⌉ = ⌊(9n + 9)/10⌋.
  const std::size_t rank = (9 * durations.size() + 9) / 10;
  const auto kth = durations.begin() + static_cast<std::ptrdiff_t>(rank - 1);
  std::nth_element(durations.begin(), kth, durations.end());
  return *kth;
}

void TrialDurations::Window::add(double seconds) {
  if (last.size() < kWindow) {
    last.push_back(seconds);
  } else {
    last[next] = seconds;
    next = (next + 1) % kWindow;
  }
  p90 = percentile_90(last);
}

TrialDurations::TrialDurations(const RunState& state) {
  struct Ended {
    double when;
    int task;
    const workers::Outcome* outcome;
  };
  std::vector<Ended> ended;
  for (const Trial& t : state.trials()) {
    // A trial's outcome is its last ended attempt's: one ended when it is final or has failed.
    if (t.lost() || !(t.finished || t.failed_attempts > 0)) continue;
    ended.push_back({t.finished_unix, t.task, &t.outcome});
  }
  std::stable_sort(ended.begin(), ended.end(), [](const Ended& a, const Ended& b) { return a.when < b.when; });
  for (const Ended& e : ended) add(e.task, *e.outcome);
}

void TrialDurations::add(int task, const workers::Outcome& outcome) {
  if (!counts(outcome.status) || !(outcome.duration_s >= 0) || !std::isfinite(outcome.duration_s)) return;
  if (task >= 0) {
    if (tasks_.size() <= static_cast<std::size_t>(task)) tasks_.resize(static_cast<std::size_t>(task) + 1);
    tasks_[static_cast<std::size_t>(task)].add(outcome.duration_s);
  }
  all_.add(outcome.duration_s);
}

std::optional<DurationEstimate> TrialDurations::estimate(int task) const {
  if (task >= 0 && static_cast<std::size_t>(task) < tasks_.size()) {
    const Window& own = tasks_[static_cast<std::size_t>(task)];
    if (!own.last.empty()) return DurationEstimate{own.p90, basis_of(own.last.size(), false)};
  }
  if (all_.last.empty()) return std::nullopt;
  return DurationEstimate{all_.p90, basis_of(all_.last.size(), true)};
}

// ---- DeadlinePlanner ------------------------------------------------------------------------

DeadlinePlanner::DeadlinePlanner(Deadline deadline, const jobs::JobSpec& job, const RunState& state, Log log)
    : deadline_(std::move(deadline)), job_(&job), state_(&state), durations_(state), log_(std::move(log)) {}

double DeadlinePlanner::cutoff() const { return deadline_.unix_time - job_->grace_s; }

std::string DeadlinePlanner::start_line() const {
  return "allocation ends " + format_utc(deadline_.unix_time) + " (" + deadline_.source +
         "); trials that cannot finish by then less grace_s " + seconds_text(job_->grace_s) + " s are not started";
}

std::optional<DurationEstimate> DeadlinePlanner::estimate(int task) const {
  if (auto e = durations_.estimate(task)) return e;
  // Nothing has ended yet: an attempt never runs longer than its timeout.
  if (job_->objective.timeout_s) return DurationEstimate{*job_->objective.timeout_s, "the objective's timeout_s"};
  return std::nullopt;
}

bool DeadlinePlanner::may_start(int task, double now) {
  const std::optional<DurationEstimate> e = estimate(task);
  if (!e && now < cutoff()) {
    if (!said_no_estimate_) {
      log_("deadline: no trial has ended yet and the objective has no timeout_s, so nothing tells how long a trial "
           "takes: trials start until one has ended");
      said_no_estimate_ = true;
    }
    return true;
  }
  // Past the cut-off no trial fits, whatever it takes.
  const bool fits = e && now + e->seconds <= cutoff();
  if (task < 0) return fits;
  if (answers_.size() <= static_cast<std::size_t>(task)) answers_.resize(static_cast<std::size_t>(task) + 1, Answer::unasked);
  Answer& last = answers_[static_cast<std::size_t>(task)];
  const Answer answer = fits ? Answer::fits : Answer::does_not_fit;
  // A task that fits from the start says nothing: the start line said trials run.
  if (answer != last && !(last == Answer::unasked && fits)) log_(explain(task, now));
  last = answer;
  return fits;
}

std::string DeadlinePlanner::explain(int task, double now) const {
  const std::vector<TaskIdentity>& tasks = state_->job().tasks;
  const std::string name = task >= 0 && static_cast<std::size_t>(task) < tasks.size()
                               ? tasks[static_cast<std::size_t>(task)].name
                               : "#" + std::to_string(task);
  const double left = std::max(0.0, cutoff() - now);
  const std::string limit = seconds_text(left) + " s left before the deadline " + format_utc(deadline_.unix_time) +
                            " less grace_s " + seconds_text(job_->grace_s);
  const std::optional<DurationEstimate> e = estimate(task);
  if (!e) {
    return "task " + name + (now < cutoff() ? ": starting trials: nothing tells how long one takes yet, "
                                            : ": not starting trials: ") + limit;
  }
  const bool fits = now + e->seconds <= cutoff();
  return "task " + name + (fits ? ": starting trials: " : ": not starting trials: ") + "a trial takes ~" +
         seconds_text(e->seconds) + " s (" + e->basis + "), " + limit;
}

std::string DeadlinePlanner::nothing_fits(double now) const {
  return "stopping for the deadline: no trial can finish in the " +
         seconds_text(std::max(0.0, cutoff() - now)) + " s left before the deadline " + format_utc(deadline_.unix_time) +
         " (" + deadline_.source + ") less grace_s " + seconds_text(job_->grace_s);
}

std::string DeadlinePlanner::cutoff_reached() const {
  return "stopping for the deadline: grace_s (" + seconds_text(job_->grace_s) + " s) before the allocation ends at " +
         format_utc(deadline_.unix_time) + " (" + deadline_.source + ")";
}

}  // namespace lbo::orchestrator
