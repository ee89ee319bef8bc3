// [workers] simulate_duration and the checks of a simulated run.

#include <cmath>
#include <vector>

#include "lbo/jobs/csv.hpp"
#include "lbo/jobs/job_spec.hpp"

namespace lbo::jobs {

namespace {

std::string number(double value) {
  std::string text = std::to_string(value);
  text.erase(text.find_last_not_of('0') + 1);
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

std::string_view trimmed(std::string_view text) {
  const std::size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t") + 1 - begin);
}

// "name(x, y)" as its name and numbers; none when it is not of that shape.
std::optional<std::pair<std::string_view, std::vector<double>>> call_of(std::string_view text) {
  const std::size_t open = text.find('(');
  if (open == std::string_view::npos || text.back() != ')') return std::nullopt;
  std::vector<double> args;
  std::string_view rest = text.substr(open + 1, text.size() - open - 2);
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::optional<double> value = parse_number(trimmed(rest.substr(0, comma)));
    if (!value) return std::nullopt;
    args.push_back(*value);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return std::pair{trimmed(text.substr(0, open)), std::move(args)};
}

}  // namespace

std::string to_string(const SimulatedDuration& d) {
  switch (d.kind) {
    case SimulatedDuration::Kind::table: return "table";
    case SimulatedDuration::Kind::fixed: return number(d.a);
    case SimulatedDuration::Kind::uniform: return "uniform(" + number(d.a) + ", " + number(d.b) + ")";
    case SimulatedDuration::Kind::lognormal: return "lognormal(" + number(d.a) + ", " + number(d.b) + ")";
    case SimulatedDuration::Kind::exponential: return "exponential(" + number(d.a) + ")";
  }
  return "?";
}

std::optional<SimulatedDuration> parse_simulated_duration(std::string_view text) {
  text = trimmed(text);
  using Kind = SimulatedDuration::Kind;
  if (text == "table") return SimulatedDuration{};
  if (const std::optional<double> seconds = parse_number(text)) {
    if (*seconds < 0) return std::nullopt;
    return SimulatedDuration{Kind::fixed, *seconds, 0};
  }
  const auto call = call_of(text);
  if (!call) return std::nullopt;
  const auto& [name, args] = *call;
  if (name == "uniform" && args.size() == 2 && args[0] >= 0 && args[1] >= args[0]) {
    return SimulatedDuration{Kind::uniform, args[0], args[1]};
  }
  if (name == "lognormal" && args.size() == 2 && args[1] > 0) return SimulatedDuration{Kind::lognormal, args[0], args[1]};
  if (name == "exponential" && args.size() == 1 && args[0] > 0) return SimulatedDuration{Kind::exponential, args[0], 0};
  return std::nullopt;
}

std::string simulation_problem(const JobSpec& job, std::string_view where) {
  if (!job.objective.table) {
    return std::string(where) + ": a simulated run looks its trials up in a table, and this job runs a command; "
           "set [objective] table, or run without simulation";
  }
  if (job.workers.simulate_duration.kind == SimulatedDuration::Kind::table && job.objective.table->time_column.empty()) {
    return std::string(where) + ": a simulated trial takes the time of its table row, and the table has no time "
           "column; name it with objective.table_time, or set workers.simulate_duration (seconds, \"uniform(a, b)\", "
           "\"lognormal(mu, sigma)\" or \"exponential(mean)\")";
  }
  return {};
}

}  // namespace lbo::jobs
