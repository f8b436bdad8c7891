#include "gdsb/transfer_path.hpp"

#include <stdexcept>

namespace gdsb {

void PathRegistry::add(std::unique_ptr<TransferPath> path) {
  if (path == nullptr) throw std::invalid_argument("PathRegistry::add: null path");
  if (find(path->type()) != nullptr) {
    throw std::logic_error("PathRegistry::add: a path for this type is already listed");
  }
  paths_.push_back(std::move(path));
}

TransferPath* PathRegistry::find(XferType t) const {
  for (const auto& p : paths_) {
    if (p->type() == t) return p.get();
  }
  return nullptr;
}

}  // namespace gdsb
