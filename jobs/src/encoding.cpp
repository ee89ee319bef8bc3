#include "lbo/jobs/encoding.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace lbo::jobs {

namespace {

// Position of v within [low, high] on the parameter's scale, in [0, 1].
double to_unit(const ParamSpec& p, double v) {
  if (p.log) return (std::log(v) - std::log(p.low)) / (std::log(p.high) - std::log(p.low));
  return (v - p.low) / (p.high - p.low);
}

double from_unit(const ParamSpec& p, double u) {
  u = std::clamp(u, 0.0, 1.0);
  const double v = p.log ? std::exp(std::log(p.low) + u * (std::log(p.high) - std::log(p.low)))
                         : p.low + u * (p.high - p.low);
  return std::clamp(v, p.low, p.high);
}

}  // namespace

Encoder::Encoder(const Space& space) : space_(space) {
  for (int i = 0; i < space.size(); ++i) {
    const ParamSpec& p = space.params()[i];
    EncodedGroup g;
    g.param = i;
    g.offset = dimension_;
    switch (p.type) {
      case ParamType::real: g.kind = EncodedGroup::Kind::continuous; break;
      case ParamType::integer: g.kind = EncodedGroup::Kind::integer; break;
      case ParamType::categorical:
        g.kind = EncodedGroup::Kind::one_hot;
        g.width = static_cast<int>(p.choices.size());
        break;
    }
    dimension_ += g.width;
    groups_.push_back(g);
  }
}

std::vector<double> Encoder::encode(const Config& config) const {
  if (config.values.size() != groups_.size()) {
    throw std::invalid_argument("Encoder::encode: config has the wrong number of values");
  }
  std::vector<double> x(dimension_, 0.0);
  for (const EncodedGroup& g : groups_) {
    const std::optional<double>& v = config.values[g.param];
    if (!v) continue;
    const ParamSpec& p = space_.params()[g.param];
    if (g.kind == EncodedGroup::Kind::one_hot) {
      x[g.offset + static_cast<int>(*v)] = 1.0;
    } else {
      x[g.offset] = std::clamp(to_unit(p, *v), 0.0, 1.0);
    }
  }
  return x;
}

Config Encoder::decode(std::span<const double> x) const {
  if (static_cast<int>(x.size()) != dimension_) {
    throw std::invalid_argument("Encoder::decode: x has the wrong length");
  }
  Config config;
  config.values.assign(groups_.size(), std::nullopt);
  for (int i : space_.evaluation_order()) {
    if (!space_.is_active(i, config)) continue;
    const EncodedGroup& g = groups_[i];
    const ParamSpec& p = space_.params()[i];
    switch (g.kind) {
      case EncodedGroup::Kind::continuous: config.values[i] = from_unit(p, x[g.offset]); break;
      case EncodedGroup::Kind::integer:
        config.values[i] = std::clamp(std::round(from_unit(p, x[g.offset])), p.low, p.high);
        break;
      case EncodedGroup::Kind::one_hot: {
        const auto first = x.begin() + g.offset;
        config.values[i] = static_cast<double>(std::max_element(first, first + g.width) - first);
        break;
      }
    }
  }
  return config;
}

}  // namespace lbo::jobs
