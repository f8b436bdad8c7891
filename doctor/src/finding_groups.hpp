// Findings said once for the GPUs they hold for (issue 43, STYLE 18): the same rule, confidence,
// fix and evidence on several GPUs (compat mode on every GPU of a VM) is one finding naming
// "GPU0-7", each GPU's figure in its evidence where it differs. Private to the doctor library.
#pragma once

#include <vector>

#include "gdsb/doctor/diagnosis.hpp"

namespace gdsb::doctor::detail {

// The GPUs a finding names (by label or BDF, alone or as "GPU0 0000:..").
std::vector<const GpuDiagnosis*> named_gpus(const Diagnosis& d, const Finding& f);

// Findings about one GPU each that differ only in that GPU and its figures become one finding
// (first member's place, devices and per_gpu of all, the highest expected figure and impact);
// a finding alike with no other is left as it is, so one GPU reads as before.
void group_findings(Diagnosis& d);

}  // namespace gdsb::doctor::detail
