// Texts about several GPUs said once (issue 35 and 43, STYLE 18: on eight GPUs a fact common to
// all is said once). A text about one GPU is read as words, that GPU's label, device names
// (PCI addresses, and any name the caller gives as the GPU's own) and figures (GB/s, percent,
// MiB). GPUs whose texts have the same words are one text: their labels as a set ("GPU0-7"),
// a device or figure common to all once, a figure that differs as its range and each GPU's
// value, a device that differs as "each GPU's own" with the devices given per GPU. The doctor's findings and gdsb-topo's checks and ceilings both use it.
#pragma once

#include <string>
#include <vector>

namespace gdsb::topo {

// "GPU0-3, GPU5" from "GPU0", "GPU1", ...; labels that are no CUDA index are listed as given.
std::string gpu_set(const std::vector<std::string>& labels);

// One GPU a text is about: its label and names of its own besides PCI addresses (block and
// net device names, "nvme0n1").
struct TextGpu {
  std::string label;
  std::vector<std::string> own;
};

// The text's words with marks where the GPU's label, a device name or a figure stands: texts
// of equal shape say the same of different GPUs.
std::string text_shape(const std::string& text, const TextGpu& gpu);

// What a device that differs per GPU reads as in the text said once.
inline constexpr const char* kEachOwn = "each GPU's own";

// One text for texts of equal shape, one per GPU, in GPU order: a figure that differs as its
// range, then each value with its GPUs ("1.0-1.2 GB/s (GPU0-3 1.0; GPU4-7 1.2)"); a device
// that differs as kEachOwn, each GPU's such devices (in order, once) given in `own` when asked
// for, so that no list of addresses stands where one pair is meant.
std::string said_together(const std::vector<TextGpu>& gpus, const std::vector<std::string>& texts,
                          std::vector<std::vector<std::string>>* own = nullptr);

}  // namespace gdsb::topo
