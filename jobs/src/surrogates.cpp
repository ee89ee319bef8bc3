#include <algorithm>
#include <stdexcept>

#include "lbo/jobs/job_spec.hpp"

namespace lbo::jobs {

namespace {

// A new model is one line here (and one entry in orchestrator/policy/src/models/).
constexpr SurrogateTraits kCatalog[] = {
    {SurrogateKind::lbo, "lbo", 2, false, std::nullopt, OutputWarping::yeo_johnson, true},
    {SurrogateKind::gp, "gp", 0, false, std::nullopt, OutputWarping::none},
    {SurrogateKind::ablr, "ablr", 2, false, std::nullopt, OutputWarping::none},
    {SurrogateKind::libo, "libo", 0, true, std::nullopt, OutputWarping::none},
    {SurrogateKind::jumbo, "jumbo", 0, false, AcquisitionKind::ucb, OutputWarping::none},
    {SurrogateKind::random, "random", 0, false, std::nullopt, OutputWarping::none},
};

}  // namespace

std::span<const SurrogateTraits> surrogate_catalog() { return kCatalog; }

const SurrogateTraits& traits_of(SurrogateKind kind) {
  const auto* it = std::find_if(std::begin(kCatalog), std::end(kCatalog), [kind](const SurrogateTraits& t) { return t.kind == kind; });
  if (it == std::end(kCatalog)) throw std::logic_error("a surrogate kind without its line in jobs/src/surrogates.cpp");
  return *it;
}

}  // namespace lbo::jobs
