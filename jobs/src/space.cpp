#include "lbo/jobs/space.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "lbo/jobs/csv.hpp"

namespace lbo::jobs {

std::string_view to_string(ParamType type) {
  switch (type) {
    case ParamType::real: return "float";
    case ParamType::integer: return "int";
    case ParamType::categorical: return "categorical";
  }
  return "?";
}

namespace {

void check_param(const ParamSpec& p, int index, int count, const std::vector<ParamSpec>& all) {
  auto fail = [&](const std::string& what) {
    throw std::invalid_argument("space." + p.name + ": " + what);
  };
  if (p.type == ParamType::categorical) {
    if (p.choices.empty()) fail("empty choices");
  } else {
    if (!(p.low < p.high)) fail("low must be < high");
    if (p.log && !(p.low > 0)) fail("log scale needs low > 0");
    const auto bound = static_cast<double>(kMaxIntBound);
    if (p.type == ParamType::integer && (p.low != std::floor(p.low) || p.high != std::floor(p.high) ||
                                         p.low < -bound || p.high > bound)) {
      fail("int bounds must be integers within ±2^53");
    }
  }
  for (const Condition& c : p.when) {
    if (c.parent < 0 || c.parent >= count || c.parent == index) fail("bad condition parent");
    const ParamSpec& parent = all[c.parent];
    if (parent.type != ParamType::categorical) fail("condition on a non-categorical parameter");
    for (int choice : c.choices) {
      if (choice < 0 || choice >= static_cast<int>(parent.choices.size())) {
        fail("condition names a choice out of range");
      }
    }
  }
}

// Depth-first topological order over `when` edges (parent before child); throws on a cycle.
std::vector<int> evaluation_order_of(const std::vector<ParamSpec>& params) {
  const int n = static_cast<int>(params.size());
  enum class Mark : std::uint8_t { none, visiting, done };
  std::vector<Mark> mark(n, Mark::none);
  std::vector<int> order;
  order.reserve(n);
  auto visit = [&](auto&& self, int i) -> void {
    if (mark[i] == Mark::done) return;
    if (mark[i] == Mark::visiting) {
      throw std::invalid_argument("space." + params[i].name + ": `when` conditions form a cycle");
    }
    mark[i] = Mark::visiting;
    for (const Condition& c : params[i].when) self(self, c.parent);
    mark[i] = Mark::done;
    order.push_back(i);
  };
  for (int i = 0; i < n; ++i) visit(visit, i);
  return order;
}

}  // namespace

Space::Space(std::vector<ParamSpec> params) : params_(std::move(params)) {
  const int n = size();
  for (int i = 0; i < n; ++i) check_param(params_[i], i, n, params_);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < i; ++j) {
      if (params_[i].name == params_[j].name) {
        throw std::invalid_argument("space." + params_[i].name + ": defined twice");
      }
    }
  }
  order_ = evaluation_order_of(params_);
}

int Space::index_of(std::string_view name) const {
  for (int i = 0; i < size(); ++i) {
    if (params_[i].name == name) return i;
  }
  return -1;
}

bool Space::is_active(int param, const Config& config) const {
  for (const Condition& c : params_[param].when) {
    const std::optional<double>& parent = config.values[c.parent];
    if (!parent) return false;
    const int choice = static_cast<int>(*parent);
    if (std::find(c.choices.begin(), c.choices.end(), choice) == c.choices.end()) return false;
  }
  return true;
}

Config Space::sample(std::mt19937_64& rng) const { return sample_balanced(rng, {}); }

Config Space::sample_balanced(std::mt19937_64& rng, const std::vector<Config>& design) const {
  Config config;
  config.values.assign(params_.size(), std::nullopt);
  for (int i : order_) {
    if (!is_active(i, config)) continue;
    const ParamSpec& p = params_[i];
    switch (p.type) {
      case ParamType::real: {
        if (p.log) {
          std::uniform_real_distribution<double> u(std::log(p.low), std::log(p.high));
          config.values[i] = std::clamp(std::exp(u(rng)), p.low, p.high);
        } else {
          config.values[i] = std::uniform_real_distribution<double>(p.low, p.high)(rng);
        }
        break;
      }
      case ParamType::integer: {
        if (p.log) {
          // Log-uniform over the integers: floor of a log-uniform draw on [low, high + 1).
          std::uniform_real_distribution<double> u(std::log(p.low), std::log(p.high + 1.0));
          config.values[i] = std::clamp(std::floor(std::exp(u(rng))), p.low, p.high);
        } else {
          std::uniform_int_distribution<std::int64_t> u(static_cast<std::int64_t>(p.low),
                                                        static_cast<std::int64_t>(p.high));
          config.values[i] = static_cast<double>(u(rng));
        }
        break;
      }
      case ParamType::categorical: {
        // The choices least used so far where the parameter was active (all of them when the
        // design is empty), one of them uniformly.
        std::vector<int> uses(p.choices.size(), 0);
        for (const Config& c : design) {
          if (c.values.size() == params_.size() && c.values[i]) ++uses[static_cast<std::size_t>(*c.values[i])];
        }
        const int fewest = *std::min_element(uses.begin(), uses.end());
        std::vector<int> least;
        for (std::size_t c = 0; c < uses.size(); ++c) {
          if (uses[c] == fewest) least.push_back(static_cast<int>(c));
        }
        // (int, as sample() always drew: with no design the stream of draws is unchanged.)
        std::uniform_int_distribution<int> u(0, static_cast<int>(least.size()) - 1);
        config.values[i] = least[static_cast<std::size_t>(u(rng))];
        break;
      }
    }
  }
  return config;
}

bool Space::is_valid(const Config& config) const {
  if (config.values.size() != params_.size()) return false;
  for (int i = 0; i < size(); ++i) {
    const std::optional<double>& v = config.values[i];
    if (v.has_value() != is_active(i, config)) return false;
    if (!v) continue;
    const ParamSpec& p = params_[i];
    if (!std::isfinite(*v)) return false;
    switch (p.type) {
      case ParamType::real:
        if (*v < p.low || *v > p.high) return false;
        break;
      case ParamType::integer:
        if (*v < p.low || *v > p.high || *v != std::floor(*v)) return false;
        break;
      case ParamType::categorical:
        if (*v < 0 || *v >= static_cast<double>(p.choices.size()) || *v != std::floor(*v)) {
          return false;
        }
        break;
    }
  }
  return true;
}

std::string Space::to_json(const Config& config) const {
  nlohmann::ordered_json object = nlohmann::ordered_json::object();
  for (int i = 0; i < size(); ++i) {
    if (!config.values[i]) continue;
    const ParamSpec& p = params_[i];
    const double v = *config.values[i];
    switch (p.type) {
      case ParamType::real: object[p.name] = v; break;
      case ParamType::integer: object[p.name] = static_cast<std::int64_t>(v); break;
      case ParamType::categorical: object[p.name] = p.choices.at(static_cast<std::size_t>(v)); break;
    }
  }
  return object.dump();
}

std::string Space::format_value(int param, double value) const {
  const ParamSpec& p = params_[param];
  if (p.type == ParamType::categorical) return p.choices.at(static_cast<std::size_t>(value));
  if (p.type == ParamType::integer) return std::to_string(static_cast<std::int64_t>(value));
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, end);
}

std::optional<double> Space::parse_value(int param, std::string_view text, std::string& why) const {
  const ParamSpec& p = params_[static_cast<std::size_t>(param)];
  if (p.type == ParamType::categorical) {
    const auto at = std::find(p.choices.begin(), p.choices.end(), text);
    if (at != p.choices.end()) return static_cast<double>(at - p.choices.begin());
    why = "\"" + std::string(text) + "\" is not one of its choices";
    return std::nullopt;
  }
  const std::optional<double> number = parse_number(text);
  if (!number) {
    why = "\"" + std::string(text) + "\" is not a number";
    return std::nullopt;
  }
  double value = *number;
  const double slack = 1e-9 * (p.high - p.low);
  if (value < p.low - slack) {
    why = std::string(text) + " is below low = " + format_value(param, p.low);
    return std::nullopt;
  }
  if (value > p.high + slack) {
    why = std::string(text) + " is above high = " + format_value(param, p.high);
    return std::nullopt;
  }
  value = std::clamp(value, p.low, p.high);
  if (p.type == ParamType::integer && value != std::round(value)) {
    why = std::string(text) + " is not an integer";
    return std::nullopt;
  }
  return value;
}

std::optional<Config> Space::parse_config(const std::function<std::string_view(int)>& cell, std::string& why) const {
  Config config;
  config.values.assign(params_.size(), std::nullopt);
  for (const int i : order_) {
    if (!is_active(i, config)) continue;
    const std::string_view text = cell(i);
    const ParamSpec& p = params_[static_cast<std::size_t>(i)];
    if (text.empty()) {
      why = p.name + ": empty, but the parameter is active there";
      return std::nullopt;
    }
    const std::optional<double> value = parse_value(i, text, why);
    if (!value) {
      why = p.name + ": " + why;
      return std::nullopt;
    }
    config.values[static_cast<std::size_t>(i)] = value;
  }
  return config;
}

Config Space::from_json(std::string_view json) const {
  const nlohmann::json doc = nlohmann::json::parse(json, nullptr, false);
  if (!doc.is_object()) throw std::invalid_argument("params: not a JSON object");
  Config config;
  config.values.assign(params_.size(), std::nullopt);
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const auto at = doc.find(params_[i].name);
    if (at == doc.end()) continue;
    if (params_[i].type == ParamType::categorical) {
      const auto& choices = params_[i].choices;
      const auto choice = at->is_string() ? std::find(choices.begin(), choices.end(), at->get<std::string>()) : choices.end();
      if (choice == choices.end()) throw std::invalid_argument("params: " + params_[i].name + ": not one of its choices");
      config.values[i] = static_cast<double>(choice - choices.begin());
    } else if (at->is_number()) {
      config.values[i] = at->get<double>();
    } else {
      throw std::invalid_argument("params: " + params_[i].name + ": not a number");
    }
  }
  return config;
}

std::uint64_t trial_seed(std::uint64_t run_seed, std::int64_t trial_id) {
  // SplitMix64 finaliser (Steele, Lea & Flood 2014) over the pair.
  std::uint64_t z = run_seed + 0x9e3779b97f4a7c15ULL * (static_cast<std::uint64_t>(trial_id) + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace lbo::jobs
