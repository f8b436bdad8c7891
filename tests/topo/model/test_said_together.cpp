// Texts about several GPUs said once (issue 43): the same words for GPU0-7 are one text, a
// device each GPU has of its own given per GPU, a figure common to all once and one that differs as
// its range with each GPU's value. Expected texts written by hand.
#include <gtest/gtest.h>

#include "gdsb/topo/said_together.hpp"

namespace gdsb::topo {
namespace {

std::vector<TextGpu> gpus(int n) {
  std::vector<TextGpu> out;
  for (int i = 0; i < n; ++i) out.push_back({"GPU" + std::to_string(i), {}});
  return out;
}

TEST(SaidTogether, GpuSetNamesRangesAndPairs) {
  EXPECT_EQ(gpu_set({"GPU0", "GPU1", "GPU2", "GPU3", "GPU5"}), "GPU0-3, GPU5");
  EXPECT_EQ(gpu_set({"GPU0", "GPU1"}), "GPU0, GPU1");
  EXPECT_EQ(gpu_set({"GPU 0000:00:01.0", "GPU 0000:00:02.0"}), "GPU 0000:00:01.0, GPU 0000:00:02.0");
}

TEST(SaidTogether, EqualWordsAreOneTextWithEachGpusOwnDevice) {
  const auto g = gpus(3);
  const std::vector<std::string> texts{"GPU0 BAR1: 0000:19:00.0 BAR1 131072 MiB",
                                       "GPU1 BAR1: 0000:3b:00.0 BAR1 131072 MiB",
                                       "GPU2 BAR1: 0000:4c:00.0 BAR1 131072 MiB"};
  for (std::size_t i = 1; i < texts.size(); ++i) EXPECT_EQ(text_shape(texts[i], g[i]), text_shape(texts[0], g[0]));
  std::vector<std::vector<std::string>> own;
  EXPECT_EQ(said_together(g, texts, &own), "GPU0-2 BAR1: each GPU's own BAR1 131072 MiB");
  EXPECT_EQ(own, (std::vector<std::vector<std::string>>{{"0000:19:00.0"}, {"0000:3b:00.0"}, {"0000:4c:00.0"}}));
  // A device they share is said once, in its place.
  EXPECT_EQ(said_together(g, {"GPU0 reads vda at 0000:00:01.0", "GPU1 reads vda at 0000:00:01.0",
                              "GPU2 reads vda at 0000:00:01.0"}),
            "GPU0-2 reads vda at 0000:00:01.0");
}

TEST(SaidTogether, AFigureThatDiffersIsItsRangeThenEachGpusValue) {
  const auto g = gpus(4);
  const std::vector<std::string> texts{"read: 1.0 GB/s, 91% of it", "read: 1.2 GB/s, 91% of it",
                                       "read: 1.0 GB/s, 91% of it", "read: 0.90 GB/s, 91% of it"};
  EXPECT_EQ(said_together(g, texts), "read: 0.90-1.2 GB/s (GPU0, GPU2 1.0; GPU1 1.2; GPU3 0.90), 91% of it");
}

TEST(SaidTogether, OtherWordsOrNumbersMakeAnotherShape) {
  const TextGpu g0{"GPU0", {}}, g1{"GPU1", {}};
  EXPECT_NE(text_shape("GPU0 link Gen4 x16", g0), text_shape("GPU1 link Gen4 x8", g1));
  EXPECT_NE(text_shape("GPU0 has 2 drives", g0), text_shape("GPU1 has 3 drives", g1));
  // A name the caller gives as the GPU's own reads as a device, not as words.
  EXPECT_EQ(text_shape("reads nvme0n1", {"GPU0", {"nvme0n1"}}), text_shape("reads nvme1n1", {"GPU1", {"nvme1n1"}}));
  // GPU1 is a word of its own inside GPU10's text, not GPU1's label.
  EXPECT_NE(text_shape("GPU10 fine", g1), text_shape("GPU1 fine", g1));
}

}  // namespace
}  // namespace gdsb::topo
