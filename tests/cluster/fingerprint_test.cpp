// Fingerprint diff across a fleet: which node differs from its class, said in words and by PCI
// address. The fleet is made of the real 8x H100 HGX recording (tests/topo/fixtures/real) and
// copies of it with one fault each; a GPU gone is one line, never its neighbours renumbered.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "gdsb/cluster/fingerprint.hpp"
#include "gdsb/error.hpp"
#include "gdsb/topo/collect.hpp"
#include "gdsb/topo/fingerprint_file.hpp"

namespace gdsb::cluster {
namespace {

namespace fs = std::filesystem;

TEST(Fingerprint, WordsForLinksAndAcs) {
  EXPECT_EQ(topo::link_words(32.0, 8), "Gen5 x8");
  EXPECT_EQ(topo::link_words(16.0, 16), "Gen4 x16");
  EXPECT_EQ(topo::acs_words(0x0000), "off");
  EXPECT_EQ(topo::acs_words(0x001d), "SV+RR+CR+UF");
  EXPECT_EQ(topo::acs_words(0x000c), "RR+CR");
}

TEST(Fingerprint, NoStrictMajorityJudgesNobody) {
  Fingerprint a{{"kernel", "6.8"}}, b{{"kernel", "6.5"}};
  EXPECT_TRUE(diff_against_majority({{"n1", &a}, {"n2", &b}}).empty());
  EXPECT_TRUE(diff_against_majority({{"n1", &a}}).empty());
}

// The HGX text with one edit: a stanza (lspci's blank-line separated block) dropped, or a
// line of one stanza replaced.
Fingerprint hgx(const std::string& bdf = "", const std::string& from = "", const std::string& to = "") {
  std::ifstream in(fs::path(GDSB_TOPO_REAL_FIXTURES) / "hgx-h100-lspci-vvv.txt");
  std::ostringstream whole;
  whole << in.rdbuf();
  std::string text = whole.str();
  if (!bdf.empty()) {
    const auto start = text.find("\n" + bdf + " ") + 1;
    const auto end = text.find("\n\n", start) + 2;
    std::string stanza = text.substr(start, end - start);
    if (from.empty()) stanza.clear();
    else stanza.replace(stanza.find(from), from.size(), to);
    text.replace(start, end - start, stanza);
  }
  const fs::path tmp = fs::temp_directory_path() / ("gdsb-fp-" + std::to_string(::getpid()) + ".txt");
  std::ofstream(tmp) << text;
  topo::CollectOptions o;
  o.lookup_names = false;
  Fingerprint f = topo::fact_texts(topo::make_fingerprint(topo::collect_lspci_text(tmp, o), {}).facts);
  fs::remove(tmp);
  return f;
}

TEST(Fingerprint, AFleetFromTheHgxRecordingNamesEachFaultOnceByPciAddress) {
  const Fingerprint good = hgx();
  ASSERT_EQ(good.texts().at("GPU 0000:19:00.0 link"), "Gen5 x16");
  const Fingerprint gone = hgx("19:00.0");
  const Fingerprint narrow = hgx("3b:00.0", "Width x16 (ok)", "Width x8 (downgraded)");
  const Fingerprint acs = hgx("17:00.0", "ReqRedir- CmpltRedir-", "ReqRedir+ CmpltRedir+");
  const Fingerprint no_drive = hgx("18:00.0");
  const std::vector<NamedFingerprint> nodes{{"n1", &good},   {"n2", &gone}, {"n3", &good},     {"n4", &narrow},
                                            {"n5", &good},   {"n6", &acs},  {"n7", &no_drive}, {"n8", &good}};
  const auto d = diff_against_majority(nodes);
  std::vector<std::string> words;
  for (const auto& x : d) words.push_back(x.words);
  EXPECT_EQ(words, (std::vector<std::string>{
                       "n2: GPU 0000:19:00.0 absent; present on the 7 other nodes of its class",
                       "n4: GPU 0000:3b:00.0 link Gen5 x8 of x16 (7 others: Gen5 x16)",
                       "n6: port 0000:17:00.0 ACS RR+CR (7 others: off)",
                       "n7: NVMe 0000:18:00.0 absent; present on the 7 other nodes of its class",
                   }));
  EXPECT_EQ(nodes[reference_member(nodes, d)].node, "n1");
}

// Issue 24: node reports taken while some GPUs idle at Gen1 (LnkSta 2.5GT/s, LnkCap 32GT/s)
// and others ran are the same hardware: no difference, whenever each report was taken.
TEST(Fingerprint, GpusIdleAtGen1OnSomeNodesAreNoDifference) {
  const Fingerprint busy = hgx();
  const Fingerprint idle = hgx("19:00.0", "LnkSta:\tSpeed 32GT/s (ok)", "LnkSta:\tSpeed 2.5GT/s (downgraded)");
  ASSERT_EQ(idle.texts().at("GPU 0000:19:00.0 link"), "Gen5 x16");
  const auto d = diff_against_majority({{"n1", &idle}, {"n2", &busy}, {"n3", &idle}, {"n4", &busy}, {"n5", &idle}});
  EXPECT_TRUE(d.empty()) << d.front().words;
}

TEST(Fingerprint, AFactTheDiffDoesNotKnowIsAnErrorNamingTheNode) {
  const Fingerprint a{{"kernel", "6.8"}}, b{{"kernel", "6.8"}, {"kernel colour", "blue"}};
  try {
    diff_against_majority({{"n1", &a}, {"n2", &b}});
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("node n2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("kernel colour"), std::string::npos) << e.what();
  }
}

TEST(Fingerprint, ADeviceOnlyOneNodeHasIsOneLineToo) {
  Fingerprint base{{"GPU 0000:19:00.0", "present"}, {"GPU 0000:19:00.0 link", "Gen5 x16"}};
  Fingerprint extra = base;
  extra.set("NIC 0000:1a:00.0", "present");
  extra.set("NIC 0000:1a:00.0 link", "Gen5 x16");
  const auto d = diff_against_majority({{"a", &base}, {"b", &base}, {"c", &extra}});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].words, "c: NIC 0000:1a:00.0 present; absent on the 2 other nodes of its class");
}

TEST(Fingerprint, KeysFirstSeenOnLaterNodesAreJudgedWhereverTheySort) {
  // The first node lacks keys that sort before, between and after its own.
  const Fingerprint a{{"IOMMU", "pt"}, {"kernel", "6.8"}};
  const Fingerprint b{{"CUDA driver", "13.0"}, {"IOMMU", "pt"}, {"NVIDIA driver", "580"}, {"kernel", "6.8"}};
  Fingerprint c = b;
  c.set("nvidia-fs", "2.26");
  std::vector<std::string> words;
  for (const auto& d : diff_against_majority({{"a", &a}, {"b", &b}, {"c", &c}})) words.push_back(d.words);
  EXPECT_EQ(words, (std::vector<std::string>{"a: NVIDIA driver absent (2 others: 580)",
                                             "a: CUDA driver absent (2 others: 13.0)",
                                             "c: nvidia-fs 2.26 (2 others: absent)"}));
}

TEST(FingerprintTexts, AFingerprintReadLikeAnotherHoldsWhatLookupsWouldAndSharesItsTexts) {
  const auto table = std::make_shared<TextTable>();
  FingerprintTexts a(table);
  for (const auto& [k, v] : std::map<std::string, std::string>{{"GPU 1", "present"}, {"GPU 1 link", "Gen5 x16"}, {"IOMMU", "pt"}})
    a.set(k, v);
  FingerprintTexts b(table);  // one value differs, one key more at the end
  b.set("GPU 1", "present", &a);
  b.set("GPU 1 link", "Gen5 x8", &a);
  b.set("IOMMU", "pt", &a);
  b.set("kernel", "6.8", &a);
  EXPECT_EQ(b.texts(), (std::map<std::string, std::string>{
                           {"GPU 1", "present"}, {"GPU 1 link", "Gen5 x8"}, {"IOMMU", "pt"}, {"kernel", "6.8"}}));
  EXPECT_EQ(b.entries()[2].value, a.entries()[2].value);
  EXPECT_EQ(table->size(), 9u);  // each distinct text once
  FingerprintTexts c(table);  // out of step with `a`, and out of order
  c.set("GPU 1 link", "Gen5 x16", &a);
  c.set("GPU 1", "absent", &a);
  c.set("GPU 1 link", "Gen4 x16", &a);
  EXPECT_EQ(c.texts(), (std::map<std::string, std::string>{{"GPU 1", "absent"}, {"GPU 1 link", "Gen4 x16"}}));
}

TEST(Fingerprint, AFactWithAValueANodeOfItsOwnOnManyNodesNamesEachOfThem) {
  // A kernel command line carrying each node's root UUID on 9 of 20 nodes: more values than
  // a key usually has; the 11 alike are the majority, and each of the 9 is named.
  std::vector<Fingerprint> prints;
  for (int i = 0; i < 20; ++i)
    prints.push_back({{"IOMMU", "pt"}, {"kernel command line", i < 9 ? "root=UUID=" + std::to_string(i) : "quiet"}});
  std::vector<NamedFingerprint> nodes;
  for (int i = 0; i < 20; ++i) nodes.push_back({"n" + std::to_string(i), &prints[static_cast<std::size_t>(i)]});
  const auto d = diff_against_majority(nodes);
  ASSERT_EQ(d.size(), 9u);
  EXPECT_EQ(d[8].words, "n8: kernel command line root=UUID=8 (11 others: quiet)");
}

}  // namespace
}  // namespace gdsb::cluster
