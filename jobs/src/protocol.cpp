#include "lbo/jobs/protocol.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <nlohmann/json.hpp>

namespace lbo::jobs {

namespace {

struct PlaceholderRef {
  std::size_t begin = 0, end = 0;  // [begin, end) covers "{name}"
  std::string_view name;
};

// The next "{name}" at or after `from` whose name is an identifier.
std::optional<PlaceholderRef> next_placeholder(std::string_view arg, std::size_t from) {
  for (std::size_t open = arg.find('{', from); open != std::string_view::npos;
       open = arg.find('{', open + 1)) {
    const std::size_t close = arg.find('}', open + 1);
    if (close == std::string_view::npos) return std::nullopt;
    const std::string_view name = arg.substr(open + 1, close - open - 1);
    const bool identifier = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    });
    if (identifier) return PlaceholderRef{open, close + 1, name};
  }
  return std::nullopt;
}

std::string_view trim(std::string_view s) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<std::string> find_unknown_placeholder(std::string_view arg) {
  for (auto ref = next_placeholder(arg, 0); ref; ref = next_placeholder(arg, ref->end)) {
    if (std::find(kPlaceholders.begin(), kPlaceholders.end(), ref->name) == kPlaceholders.end()) {
      return std::string(ref->name);
    }
  }
  return std::nullopt;
}

bool uses_placeholder(std::string_view arg, std::string_view name) {
  for (auto ref = next_placeholder(arg, 0); ref; ref = next_placeholder(arg, ref->end)) {
    if (ref->name == name) return true;
  }
  return false;
}

std::string expand_placeholders(std::string_view arg, const PlaceholderValues& values) {
  std::string out;
  std::size_t pos = 0;
  for (auto ref = next_placeholder(arg, 0); ref; ref = next_placeholder(arg, ref->end)) {
    const std::string* value = ref->name == "dataset"       ? &values.dataset
                               : ref->name == "task"        ? &values.task
                               : ref->name == "trial"       ? &values.trial
                               : ref->name == "params_file" ? &values.params_file
                               : ref->name == "workdir"     ? &values.workdir
                                                            : nullptr;
    if (value == nullptr) continue;  // unknown names are rejected when the job is validated
    out.append(arg.substr(pos, ref->begin - pos));
    out.append(*value);
    pos = ref->end;
  }
  out.append(arg.substr(pos));
  return out;
}

bool looks_like_json_object(std::string_view line) {
  line = trim(line);
  return line.size() >= 2 && line.front() == '{' && line.back() == '}';
}

namespace {

// The "objective" of a result (a stepwise one may report only its steps: the last one stands
// for the trial); why not, or "".
std::string read_objective(const nlohmann::json& doc, ObjectiveResult& result) {
  const auto objective = doc.find("objective");
  if (objective == doc.end()) {
    if (result.steps.empty()) return "result has no \"objective\"";
    result.objective = result.steps.back();
    return "";
  }
  if (!objective->is_number()) return "result \"objective\" is not a number";
  result.objective = objective->get<double>();
  return std::isfinite(result.objective) ? "" : "result \"objective\" is not finite";
}

// The values of a result with several objectives, one per name in order; why not, or "".
std::string read_named_values(const nlohmann::json& doc, const std::vector<std::string>& names, ObjectiveResult& result) {
  std::vector<double>& values = result.values;
  std::string all;
  for (const std::string& name : names) all += (all.empty() ? "" : ", ") + name;
  for (const auto& [key, value] : doc.items()) {
    if (key == "steps" || key == "metrics" || std::find(names.begin(), names.end(), key) != names.end()) continue;
    return "result \"" + key + "\" is none of the objectives (" + all + "); put other values in \"metrics\"";
  }
  for (const std::string& name : names) {
    const auto it = doc.find(name);
    if (it == doc.end()) {
      std::string example;
      for (const std::string& n : names) example += (example.empty() ? "{\"" : ", \"") + n + "\": 1.5";
      return "result has no \"" + name + "\"; [objective] objectives names " + all + ": give each, e.g. " + example + "}";
    }
    if (!it->is_number()) return "result \"" + name + "\" is not a number";
    const double v = it->get<double>();
    if (!std::isfinite(v)) return "result \"" + name + "\" is not finite";
    values.push_back(v);
  }
  result.objective = values.front();
  return "";
}

}  // namespace

ParsedResult parse_objective_result(std::string_view text, const std::vector<std::string>& names) {
  using nlohmann::json;
  ParsedResult parsed;
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    // Python's json.dumps writes NaN/Infinity, which is not JSON: name the real problem.
    const bool non_finite = text.find("NaN") != std::string_view::npos ||
                            text.find("Infinity") != std::string_view::npos;
    parsed.error = non_finite ? "result holds NaN or Infinity, which is not a finite number"
                              : "result is not valid JSON";
    return parsed;
  }
  if (!doc.is_object()) {
    parsed.error = "result is not a JSON object";
    return parsed;
  }
  ObjectiveResult result;
  if (const auto steps = doc.find("steps"); steps != doc.end() && !steps->is_null()) {
    if (!steps->is_array()) {
      parsed.error = "result \"steps\" is not an array";
      return parsed;
    }
    for (const json& step : *steps) {
      if (!step.is_number() || !std::isfinite(step.get<double>())) {
        parsed.error = "result \"steps\" holds a value that is not a finite number";
        return parsed;
      }
      result.steps.push_back(step.get<double>());
    }
  }
  if (const std::string error = names.empty() ? read_objective(doc, result) : read_named_values(doc, names, result);
      !error.empty()) {
    parsed.error = error;
    return parsed;
  }
  result.metrics_json = "{}";
  if (const auto metrics = doc.find("metrics"); metrics != doc.end() && !metrics->is_null()) {
    if (!metrics->is_object()) {
      parsed.error = "result \"metrics\" is not an object";
      return parsed;
    }
    result.metrics_json = metrics->dump();
  }
  parsed.result = std::move(result);
  return parsed;
}

ParsedReport parse_report(std::string_view json_text) {
  using nlohmann::json;
  ParsedReport parsed;
  const json doc = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    const bool non_finite = json_text.find("NaN") != std::string_view::npos ||
                            json_text.find("Infinity") != std::string_view::npos;
    parsed.error = non_finite ? "the report holds NaN or Infinity, which is not a finite number"
                              : "the report is not valid JSON";
    return parsed;
  }
  if (!doc.is_object()) {
    parsed.error = "the report is not a JSON object";
    return parsed;
  }
  ObjectiveReport report;
  const auto step = doc.find("step");
  // 2^53: the largest integer a JSON number (a double in most writers) holds exactly.
  constexpr double kMaxStep = 9007199254740992.0;
  if (step == doc.end() || !step->is_number() || !std::isfinite(step->get<double>()) || step->get<double>() < 1 ||
      step->get<double>() > kMaxStep || std::floor(step->get<double>()) != step->get<double>()) {
    parsed.error = "the report's \"step\" is not a positive integer";
    return parsed;
  }
  report.step = step->is_number_integer() ? step->get<std::int64_t>() : static_cast<std::int64_t>(step->get<double>());
  const auto value = doc.find("value");
  if (value == doc.end() || !value->is_number() || !std::isfinite(value->get<double>())) {
    parsed.error = "the report's \"value\" is not a finite number";
    return parsed;
  }
  report.value = value->get<double>();
  if (const auto metrics = doc.find("metrics"); metrics != doc.end() && !metrics->is_null()) {
    if (!metrics->is_object()) {
      parsed.error = "the report's \"metrics\" is not an object";
      return parsed;
    }
    report.metrics_json = metrics->dump();
  }
  parsed.report = std::move(report);
  return parsed;
}

}  // namespace lbo::jobs
