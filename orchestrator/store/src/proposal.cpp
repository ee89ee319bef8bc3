#include "lbo/orchestrator/proposal.hpp"

namespace lbo::orchestrator {

std::string_view to_string(ProposalSource source) {
  switch (source) {
    case ProposalSource::unrecorded: return "";
    case ProposalSource::initial: return "initial";
    case ProposalSource::random: return "random";
    case ProposalSource::model: return "model";
    case ProposalSource::model_prior: return "model-prior";
    case ProposalSource::random_fallback: return "random-fallback";
    case ProposalSource::earlier_best: return "earlier-best";
    case ProposalSource::interim_gp: return "interim-gp";
  }
  return "";
}

}  // namespace lbo::orchestrator
