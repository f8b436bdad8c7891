// The knowledge tables of hw_faults.hpp: Xid codes, AER error kinds, NVML clock event reasons.
// Rows are facts from the sources named in the header (kXidTableSource, kAerTableSource, nvml.h);
// the short meanings are ours. Code elsewhere looks rows up by number or name.
#include <algorithm>
#include <array>

#include "gdsb/topo/hw_faults.hpp"

namespace gdsb::topo {
namespace {

constexpr uint8_t kAll = kGenA100 | kGenH100 | kGenB100 | kGenGb200;
constexpr uint8_t kHopperOn = kGenH100 | kGenB100 | kGenGb200;
constexpr uint8_t kBlackwell = kGenB100 | kGenGb200;
using B = XidBucket;

// Which rows drain (our decision, from the catalog's immediate action): a GPU reset, a reboot,
// a mechanical check or a workflow that ends in service takes the GPU out of use, so the
// node is drained until someone acts; restarting the application, ignoring, or restarting a
// VM does not, and those are warnings. A row whose usual cause is the user's program (13,
// 31, 43, 45, 137, as the catalog says) never drains: one bad job must not empty a fleet.
// Xid 154 drains unless the action it names is None (judge_faults reads the action).
// Every row the catalog lists is here (1-172): a code it describes as "Unused" (deprecated,
// or V100 and older) is kept as such (`unused`), so a log of an older GPU is named, not
// called unknown. Rows 162-172 carry no resolution bucket in the catalog; theirs is ours
// (`bucket_ours`), from the catalog's own words for the row: 171 and 172 are "additional to
// Xid 48" (which DRAM or SRAM failed), so Xid 48's workflow; 167 (PCIe fatal timeout) and 169
// (a micro-controller halt, as 62) need a GPU reset; 168 (less memory after errors in the
// write-protected region) needs the boot re-attempted; 162-166 and 170 (power smoothing
// circuitry, confidential computing) take no GPU out of use.
constexpr std::array kXids{
    XidRow{1, "ROBUST_CHANNEL_FIFO_ERROR_FIFO_METHOD", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{2, "ROBUST_CHANNEL_FIFO_ERROR_SW_METHOD", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{3, "ROBUST_CHANNEL_FIFO_ERROR_UNK_METHOD", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{4, "ROBUST_CHANNEL_FIFO_ERROR_CHANNEL_BUSY", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{5, "ROBUST_CHANNEL_FIFO_ERROR_RUNOUT_OVERFLOW", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{6, "ROBUST_CHANNEL_FIFO_ERROR_PARSE_ERR", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{7, "ROBUST_CHANNEL_FIFO_ERROR_PTE_ERR", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{8, "ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT", "GPU stopped processing", B::RestartApp, kAll, false, false},
    XidRow{9, "ROBUST_CHANNEL_GR_ERROR_INSTANCE", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{10, "ROBUST_CHANNEL_GR_ERROR_SINGLE_STEP", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{11, "ROBUST_CHANNEL_GR_ERROR_MISSING_HW", "invalid push buffer stream", B::RestartApp, kAll, false, false},
    XidRow{12, "ROBUST_CHANNEL_GR_ERROR_SW_METHOD", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{13, "ROBUST_CHANNEL_GR_EXCEPTION", "graphics engine exception", B::RestartApp, kAll, false, true},
    XidRow{14, "ROBUST_CHANNEL_FAKE_ERROR", "injected test error", B::Ignore, kAll, false, false, true},
    XidRow{15, "ROBUST_CHANNEL_SCANLINE_TIMEOUT", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{16, "ROBUST_CHANNEL_VBLANK_CALLBACK_TIMEOUT", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{17, "ROBUST_CHANNEL_PARAMETER_ERROR", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{18, "ROBUST_CHANNEL_BUS_MASTER_TIMEOUT_ERROR", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{19, "ROBUST_CHANNEL_DISP_MISSED_NOTIFIER", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{20, "ROBUST_CHANNEL_MPEG_ERROR_SW_METHOD", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{21, "ROBUST_CHANNEL_ME_ERROR_SW_METHOD", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{22, "ROBUST_CHANNEL_VP_ERROR_SW_METHOD", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{23, "ROBUST_CHANNEL_RC_LOGGING_ENABLED", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{24, "ROBUST_CHANNEL_GR_SEMAPHORE_TIMEOUT", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{25, "ROBUST_CHANNEL_GR_ILLEGAL_NOTIFY", "illegal push buffer stream", B::RestartApp, kAll, false, false},
    XidRow{26, "ROBUST_CHANNEL_FIFO_ERROR_FBISTATE_TIMEOUT", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{27, "ROBUST_CHANNEL_VP_ERROR", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{28, "ROBUST_CHANNEL_VP2_ERROR", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{29, "ROBUST_CHANNEL_BSP_ERROR", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{30, "ROBUST_CHANNEL_BAD_ADDR_ACCESS", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{31, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", "GPU memory page fault", B::RestartApp, kAll, false, true},
    XidRow{32, "ROBUST_CHANNEL_PBDMA_ERROR", "push buffer DMA fault (PCIe quality)", B::RestartApp, kAll, false, false},
    XidRow{33, "ROBUST_CHANNEL_SEC_ERROR", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{34, "ROBUST_CHANNEL_MSVLD_ERROR", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{35, "ROBUST_CHANNEL_MSPDEC_ERROR", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{36, "ROBUST_CHANNEL_MSPPP_ERROR", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{37, "ROBUST_CHANNEL_FECS_ERR_UNIMP_FIRMWARE_METHOD", "driver firmware error", B::Ignore, kAll, false, false},
    XidRow{38, "ROBUST_CHANNEL_FECS_ERR_WATCHDOG_TIMEOUT", "driver firmware watchdog", B::Ignore, kAll, false, false},
    XidRow{39, "ROBUST_CHANNEL_CE0_ERROR", "copy engine exception", B::RestartApp, kAll, false, false},
    XidRow{40, "ROBUST_CHANNEL_CE1_ERROR", "copy engine exception", B::RestartApp, kAll, false, false},
    XidRow{41, "ROBUST_CHANNEL_CE2_ERROR", "copy engine exception", B::RestartApp, kAll, false, false},
    XidRow{42, "ROBUST_CHANNEL_VIC_ERROR", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{43, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR", "program's channel stopped", B::Ignore, kAll, false, true},
    XidRow{44, "ROBUST_CHANNEL_GR_FAULT_DURING_CTXSW", "graphics fault in a context switch", B::Ignore, kAll, false, false},
    XidRow{45, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL", "program's channel torn down", B::Workflow, kAll, false, true},
    XidRow{46, "ROBUST_CHANNEL_GPU_TIMEOUT_ERROR", "GPU stopped processing", B::ResetGpu, kAll, true, false},
    XidRow{47, "ROBUST_CHANNEL_NVENC0_ERROR", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{48, "ROBUST_CHANNEL_GPU_ECC_DBE", "double-bit ECC error", B::Workflow, kAll, true, false},
    XidRow{49, "SILENT_RUNNING_CONSTANT_LEVEL_SET_BY_REGISTRY", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{50, "SILENT_RUNNING_LEVEL_TRANSITION_DUE_TO_RC_ERROR", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{51, "SILENT_RUNNING_STRESS_TEST_FAILURE", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{52, "SILENT_RUNNING_LEVEL_TRANS_DUE_TO_TEMP_RISE", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{53, "SILENT_RUNNING_TEMP_REDUCED_CLOCKING", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{54, "SILENT_RUNNING_PWR_REDUCED_CLOCKING", "auxiliary power not connected", B::CheckMechanicals,
           kGenA100 | kGenH100 | kGenB100, true, false},
    XidRow{55, "SILENT_RUNNING_TEMPERATURE_READ_ERROR", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{56, "DISPLAY_CHANNEL_EXCEPTION", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{57, "FB_LINK_TRAINING_FAILURE_ERROR", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{58, "FB_MEMORY_ERROR", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{59, "PMU_ERROR", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{60, "ROBUST_CHANNEL_SEC2_ERROR", "video processor exception", B::RestartApp, kAll, false, false},
    XidRow{61, "PMU_BREAKPOINT", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{62, "PMU_HALT_ERROR", "internal micro-controller halt", B::ResetGpu, kAll, true, false},
    XidRow{63, "INFOROM_DRAM_RETIREMENT_EVENT", "memory row remapped or page retired", B::Ignore, kAll, false, false},
    XidRow{64, "INFOROM_DRAM_RETIREMENT_FAILURE", "memory row remapping failed", B::ResetGpu, kAll, true, false},
    XidRow{65, "ROBUST_CHANNEL_NVENC1_ERROR", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{66, "ROBUST_CHANNEL_FECS_ERR_REG_ACCESS_VIOLATION", "illegal access by the driver", B::Ignore, kAll, false, false},
    XidRow{67, "ROBUST_CHANNEL_FECS_ERR_VERIF_VIOLATION", "illegal access by the driver", B::Ignore, kAll, false, false},
    XidRow{68, "ROBUST_CHANNEL_NVDEC0_ERROR", "video decoder exception", B::RestartApp, kAll, false, false},
    XidRow{69, "ROBUST_CHANNEL_GR_CLASS_ERROR", "graphics engine class error", B::RestartApp, kAll, false, false},
    XidRow{70, "ROBUST_CHANNEL_CE3_ERROR", "copy engine error", B::RestartApp, kAll, false, false},
    XidRow{71, "ROBUST_CHANNEL_CE4_ERROR", "copy engine error", B::RestartApp, kAll, false, false},
    XidRow{72, "ROBUST_CHANNEL_CE5_ERROR", "copy engine error", B::RestartApp, kAll, false, false},
    XidRow{73, "ROBUST_CHANNEL_NVENC2_ERROR", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{74, "NVLINK_ERROR", "NVLink error", B::Workflow, kGenA100 | kGenH100, true, false},
    XidRow{75, "ROBUST_CHANNEL_CE6_ERROR", "copy engine error", B::RestartApp, kAll, false, false},
    XidRow{76, "ROBUST_CHANNEL_CE7_ERROR", "copy engine error", B::RestartApp, kAll, false, false},
    XidRow{77, "ROBUST_CHANNEL_CE8_ERROR", "copy engine error", B::RestartApp, kAll, false, false},
    XidRow{78, "VGPU_START_ERROR", "vGPU start error", B::UpdateSoftware, kAll, false, false},
    XidRow{79, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", "fallen off the bus", B::RebootNode, kAll, true, false},
    XidRow{80, "PBDMA_PUSHBUFFER_CRC_MISMATCH", "corrupted data sent to the GPU", B::RestartApp, kGenA100 | kGenH100, false, false},
    XidRow{81, "ROBUST_CHANNEL_VGA_SUBSYSTEM_ERROR", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{82, "ROBUST_CHANNEL_NVJPG0_ERROR", "JPEG engine error", B::RestartApp, kAll, false, false},
    XidRow{83, "ROBUST_CHANNEL_NVDEC1_ERROR", "video decoder error", B::RestartApp, kAll, false, false},
    XidRow{84, "ROBUST_CHANNEL_NVDEC2_ERROR", "video decoder error", B::RestartApp, kAll, false, false},
    XidRow{85, "ROBUST_CHANNEL_CE9_ERROR", "copy engine error", B::RestartApp, kAll, false, false},
    XidRow{86, "ROBUST_CHANNEL_OFA0_ERROR", "optical flow engine exception", B::RestartApp, kAll, false, false},
    XidRow{87, "NVTELEMETRY_DRIVER_REPORT", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{88, "ROBUST_CHANNEL_NVDEC3_ERROR", "video decoder error", B::RestartApp, kAll, false, false},
    XidRow{89, "ROBUST_CHANNEL_NVDEC4_ERROR", "video decoder error", B::RestartApp, kAll, false, false},
    XidRow{90, "LTC_ERROR", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{91, "RESERVED_XID", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{92, "EXCESSIVE_SBE_INTERRUPTS", "high single-bit ECC error rate", B::Ignore, kAll, false, false},
    XidRow{93, "INFOROM_ERASE_LIMIT_EXCEEDED", "InfoROM wear limit reached", B::Ignore, kGenA100, false, false},
    XidRow{94, "ROBUST_CHANNEL_CONTAINED_ERROR", "contained memory error", B::RestartApp, kAll, false, false},
    XidRow{95, "ROBUST_CHANNEL_UNCONTAINED_ERROR", "uncontained memory error", B::ResetGpu, kAll, true, false},
    XidRow{96, "ROBUST_CHANNEL_NVDEC5_ERROR", "video decoder error", B::RestartApp, kHopperOn, false, false},
    XidRow{97, "ROBUST_CHANNEL_NVDEC6_ERROR", "video decoder error", B::RestartApp, kHopperOn, false, false},
    XidRow{98, "ROBUST_CHANNEL_NVDEC7_ERROR", "video decoder error", B::RestartApp, kHopperOn, false, false},
    XidRow{99, "ROBUST_CHANNEL_NVJPG1_ERROR", "JPEG engine error", B::RestartApp, kHopperOn, false, false},
    XidRow{100, "ROBUST_CHANNEL_NVJPG2_ERROR", "JPEG engine error", B::RestartApp, kHopperOn, false, false},
    XidRow{101, "ROBUST_CHANNEL_NVJPG3_ERROR", "JPEG engine error", B::RestartApp, kHopperOn, false, false},
    XidRow{102, "ROBUST_CHANNEL_NVJPG4_ERROR", "JPEG engine error", B::RestartApp, kHopperOn, false, false},
    XidRow{103, "ROBUST_CHANNEL_NVJPG5_ERROR", "JPEG engine error", B::RestartApp, kHopperOn, false, false},
    XidRow{104, "ROBUST_CHANNEL_NVJPG6_ERROR", "JPEG engine error", B::RestartApp, kHopperOn, false, false},
    XidRow{105, "ROBUST_CHANNEL_NVJPG7_ERROR", "JPEG engine error", B::RestartApp, kHopperOn, false, false},
    XidRow{106, "SMBPBI_TEST_MESSAGE", "out-of-band test message", B::Ignore, kAll, false, false},
    XidRow{107, "SMBPBI_TEST_MESSAGE_SILENT", "out-of-band test message", B::Ignore, kAll, false, false},
    XidRow{108, "NVLINK_REMOTE_TRANSLATION_ERROR", "NVLink remote translation error", B::Ignore, kAll, false, false, true},
    XidRow{109, "ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR", "context switch timeout", B::ResetGpu, kAll, true, false},
    XidRow{110, "SEC_FAULT_ERROR", "security fault", B::ResetGpu, kHopperOn, true, false},
    XidRow{111, "BUNDLE_ERROR_EVENT", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{112, "DISP_SUPERVISOR_ERROR", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{113, "DP_LT_FAILURE", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{114, "HEAD_RG_UNDERFLOW", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{115, "CORE_CHANNEL_REGS", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{116, "WINDOW_CHANNEL_REGS", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{117, "CURSOR_CHANNEL_REGS", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{118, "HEAD_REGS", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{119, "GSP_RPC_TIMEOUT", "GSP firmware did not answer", B::ResetGpu, kAll, true, false},
    XidRow{120, "GSP_ERROR", "GSP firmware error", B::ResetGpu, kAll, true, false},
    XidRow{121, "C2C_ERROR", "corrected errors on the C2C link", B::Ignore, kGenGb200, false, false},
    XidRow{122, "SPI_PMU_RPC_READ_FAIL", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{123, "SPI_PMU_RPC_WRITE_FAIL", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{124, "SPI_PMU_RPC_ERASE_FAIL", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{125, "INFOROM_FS_ERROR", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{126, "ROBUST_CHANNEL_CE10_ERROR", "copy engine error", B::RestartApp, kBlackwell, false, false},
    XidRow{127, "ROBUST_CHANNEL_CE11_ERROR", "copy engine error", B::RestartApp, kBlackwell, false, false},
    XidRow{128, "ROBUST_CHANNEL_CE12_ERROR", "copy engine error", B::RestartApp, kBlackwell, false, false},
    XidRow{129, "ROBUST_CHANNEL_CE13_ERROR", "copy engine error", B::RestartApp, kBlackwell, false, false},
    XidRow{130, "ROBUST_CHANNEL_CE14_ERROR", "copy engine error", B::RestartApp, kBlackwell, false, false},
    XidRow{131, "ROBUST_CHANNEL_CE15_ERROR", "copy engine error", B::RestartApp, kBlackwell, false, false},
    XidRow{132, "ROBUST_CHANNEL_CE16_ERROR", "copy engine error", B::RestartApp, kBlackwell, false, false},
    XidRow{133, "ROBUST_CHANNEL_CE17_ERROR", "copy engine error", B::RestartApp, kBlackwell, false, false},
    XidRow{134, "ROBUST_CHANNEL_CE18_ERROR", "copy engine error", B::RestartApp, kBlackwell, false, false},
    XidRow{135, "ROBUST_CHANNEL_CE19_ERROR", "copy engine error", B::RestartApp, kBlackwell, false, false},
    XidRow{136, "ALI_TRAINING_FAIL", "NVLink training failed", B::ResetGpu, kGenH100, true, false},
    XidRow{137, "NVLINK_PRIV_ERR", "NVLink peer access fault", B::Ignore, kAll, false, true},
    XidRow{138, "ROBUST_CHANNEL_DLA_ERROR", "unused since Ampere", B::ContactSupport, 0, false, false, true},
    XidRow{139, "ROBUST_CHANNEL_OFA1_ERROR", "optical flow engine error", B::RestartApp, kBlackwell, false, false},
    XidRow{140, "UNRECOVERABLE_ECC_ERROR_ESCAPE", "unrecovered ECC error", B::ResetGpu, kAll, true, false},
    XidRow{141, "ROBUST_CHANNEL_FAST_PATH_ERROR", "CUDA fast path error", B::Ignore, kHopperOn, false, false},
    XidRow{142, "ROBUST_CHANNEL_NVENC3_ERROR", "video encoder error", B::ContactSupport, kGenGb200, false, false},
    XidRow{143, "GPU_INIT_ERROR", "GPU initialization error", B::ResetGpu, kHopperOn, true, false},
    XidRow{144, "NVLINK_SAW_ERROR", "NVLink SAW error", B::Workflow, kBlackwell, true, false},
    XidRow{145, "NVLINK_RLW_ERROR", "NVLink RLW error", B::Workflow, kBlackwell, true, false},
    XidRow{146, "NVLINK_TLW_ERROR", "NVLink TLW error", B::Workflow, kBlackwell, true, false},
    XidRow{147, "NVLINK_TREX_ERROR", "NVLink TREX error", B::Workflow, kBlackwell, true, false},
    XidRow{148, "NVLINK_NVLPW_CTRL_ERROR", "NVLink NVLPW_CTRL error", B::Workflow, kBlackwell, true, false},
    XidRow{149, "NVLINK_NETIR_ERROR", "NVLink NETIR error", B::Workflow, kBlackwell, true, false},
    XidRow{150, "NVLINK_MSE_ERROR", "NVLink MSE error", B::Workflow, kBlackwell, true, false},
    XidRow{151, "ROBUST_CHANNEL_KEY_ROTATION_ERROR", "key rotation error", B::RestartVm, kHopperOn, false, false},
    XidRow{152, "ROBUST_CHANNEL_DLA_SMMU_ERROR", "deep learning accelerator SMMU error", B::Ignore, 0, false, false},
    XidRow{153, "ROBUST_CHANNEL_DLA_TIMEOUT", "deep learning accelerator timeout", B::Ignore, 0, false, false},
    XidRow{154, "GPU_RECOVERY_ACTION_CHANGED", "recovery action changed", B::RecoveryAction, kAll, true, false},
    XidRow{155, "NVLINK_SW_DEFINED_ERROR", "NVLink taken down", B::ResetGpu, kBlackwell, true, false},
    XidRow{156, "RESOURCE_RETIREMENT_EVENT", "resource retired", B::ResetGpu, kHopperOn, true, false},
    XidRow{157, "RESOURCE_RETIREMENT_FAILURE", "resource retirement failed", B::Ignore, kHopperOn, false, false},
    XidRow{158, "GPU_FATAL_TIMEOUT", "GPU fatal timeout", B::ResetGpu, kAll, true, false},
    XidRow{159, "ROBUST_CHANNEL_CHI_NON_DATA_ERROR", "CHI non-data error", B::ContactSupport, kBlackwell, false, false},
    XidRow{160, "CHANNEL_RETIREMENT_EVENT", "channel retired", B::Ignore, kBlackwell, false, false},
    XidRow{161, "CHANNEL_RETIREMENT_FAILURE", "channel retirement failed", B::Ignore, kBlackwell, false, false},
    XidRow{162, "PSHC_REENGAGED", "power smoothing circuitry re-engaged", B::Ignore, kBlackwell, false, false, false, true},
    XidRow{163, "PSHC_DISENGAGED", "power smoothing circuitry disengaged", B::Ignore, kBlackwell, false, false, false, true},
    XidRow{164, "PSHC_LOW_LIFETIME", "power smoothing circuitry near the end of its life", B::ContactSupport, kBlackwell, false, false, false, true},
    XidRow{165, "PSHC_ZERO_LIFETIME", "power smoothing circuitry worn out", B::ContactSupport, kBlackwell, false, false, false, true},
    XidRow{166, "NVLINK_SECURE_CRYPTO_ERR", "NVLink traffic before its encryption was set up (CC mode)", B::ContactSupport, kBlackwell, false, false, false, true},
    XidRow{167, "PCIE_FATAL_TIMEOUT", "PCIe fatal timeout", B::ResetGpu, kHopperOn, true, false, false, true},
    XidRow{168, "REDUCED_GPU_MEMORY_CAPACITY", "errors in the write-protected region: less GPU memory", B::RebootNode, kAll, true, false, false, true},
    XidRow{169, "SEC2_HALT_ERROR", "internal micro-controller halt (SEC2)", B::ResetGpu, kHopperOn, true, false, false, true},
    XidRow{170, "NVLINK_SECURE_OTHER", "interrupt in confidential computing mode", B::ContactSupport, kBlackwell, false, false, false, true},
    XidRow{171, "UNCORRECTABLE_DRAM_ERROR", "uncorrectable DRAM error, with Xid 48", B::Workflow, kAll, true, false, false, true},
    XidRow{172, "UNCORRECTABLE_SRAM_ERROR", "uncorrectable SRAM error, with Xid 48", B::Workflow, kAll, true, false, false, true},
};

using C = AerClass;
constexpr std::array kAerKinds{
    AerKindRow{C::Correctable, 0, "RxErr", "RxErr", "Receiver Error", "the receiver saw a bad symbol (signal quality)"},
    AerKindRow{C::Correctable, 6, "BadTLP", "BadTLP", "Bad TLP", "a packet arrived damaged and was replayed"},
    AerKindRow{C::Correctable, 7, "BadDLLP", "BadDLLP", "Bad DLLP", "a link-layer packet arrived damaged"},
    AerKindRow{C::Correctable, 8, "Rollover", "Rollover", "REPLAY_NUM Rollover", "a packet was replayed four times in a row"},
    AerKindRow{C::Correctable, 12, "Timeout", "Timeout", "Replay Timer Timeout", "no acknowledgement came: the packet was replayed"},
    AerKindRow{C::Correctable, 13, "NonFatalErr", "AdvNonFatalErr", "Advisory Non-Fatal Error", "an uncorrectable error handled as correctable"},
    AerKindRow{C::Correctable, 14, "CorrIntErr", "CorrIntErr", "Corrected Internal Error", "the device corrected an internal error"},
    AerKindRow{C::Correctable, 15, "HeaderOF", "HeaderOF", "Header Log Overflow", "more errors than the header log holds"},
    AerKindRow{C::Uncorrectable, 0, "Undefined", "", "Undefined", "undefined (bit 0)"},
    AerKindRow{C::Uncorrectable, 4, "DLP", "DLP", "Data Link Protocol Error", "the link layer broke its protocol"},
    AerKindRow{C::Uncorrectable, 5, "SDES", "SDES", "Surprise Down Error", "the link went down unexpectedly"},
    AerKindRow{C::Uncorrectable, 12, "TLP", "TLP", "Poisoned TLP Received", "a packet carried poisoned data"},
    AerKindRow{C::Uncorrectable, 13, "FCP", "FCP", "Flow Control Protocol Error", "flow control broke its protocol"},
    AerKindRow{C::Uncorrectable, 14, "CmpltTO", "CmpltTO", "Completion Timeout", "a request got no completion in time"},
    AerKindRow{C::Uncorrectable, 15, "CmpltAbrt", "CmpltAbrt", "Completer Abort", "the completer aborted a request"},
    AerKindRow{C::Uncorrectable, 16, "UnxCmplt", "UnxCmplt", "Unexpected Completion", "a completion nobody asked for"},
    AerKindRow{C::Uncorrectable, 17, "RxOF", "RxOF", "Receiver Overflow", "the receiver's buffers overflowed"},
    AerKindRow{C::Uncorrectable, 18, "MalfTLP", "MalfTLP", "Malformed TLP", "a malformed packet"},
    AerKindRow{C::Uncorrectable, 19, "ECRC", "ECRC", "ECRC Error", "end-to-end CRC mismatch"},
    AerKindRow{C::Uncorrectable, 20, "UnsupReq", "UnsupReq", "Unsupported Request Error", "a request the device does not support"},
    AerKindRow{C::Uncorrectable, 21, "ACSViol", "ACSViol", "ACS Violation", "a packet broke an access control rule"},
    AerKindRow{C::Uncorrectable, 22, "UncorrIntErr", "UncorrIntErr", "Uncorrectable Internal Error", "an internal error the device could not correct"},
    AerKindRow{C::Uncorrectable, 23, "BlockedTLP", "BlockedTLP", "MC Blocked TLP", "a multicast packet was blocked"},
    AerKindRow{C::Uncorrectable, 24, "AtomicOpBlocked", "AtomicOpBlocked", "AtomicOp Egress Blocked", "an atomic operation was blocked"},
    AerKindRow{C::Uncorrectable, 25, "TLPBlockedErr", "TLPBlockedErr", "TLP Prefix Blocked Error", "a packet prefix was blocked"},
    AerKindRow{C::Uncorrectable, 26, "PoisonTLPBlocked", "PoisonTLPBlocked", "Poisoned TLP Egress Blocked", "a poisoned packet was blocked"},
};

// nvml.h nvmlClocksEventReason* (formerly nvmlClocksThrottleReason*).
constexpr std::array kClockEvents{
    ClockEventRow{0x1, "GpuIdle", "idle", false},
    ClockEventRow{0x2, "ApplicationsClocksSetting", "clocks set by the administrator", false},
    ClockEventRow{0x4, "SwPowerCap", "power cap (software)", true},
    ClockEventRow{0x8, "HwSlowdown", "hardware slowdown (thermal or power brake)", true},
    ClockEventRow{0x10, "SyncBoost", "held to the slowest GPU of a sync boost group", true},
    ClockEventRow{0x20, "SwThermalSlowdown", "too hot (software slowdown)", true},
    ClockEventRow{0x40, "HwThermalSlowdown", "too hot (hardware slowdown)", true},
    ClockEventRow{0x80, "HwPowerBrakeSlowdown", "external power brake", true},
    ClockEventRow{0x100, "DisplayClockSetting", "display clock setting", false},
};

}  // namespace

std::string_view xid_bucket_words(XidBucket b) {
  switch (b) {
    case B::Ignore: return "no action";
    case B::RestartApp: return "restart the application";
    case B::ResetGpu: return "reset the GPU";
    case B::RebootNode: return "reboot";
    case B::RestartVm: return "restart the VM";
    case B::UpdateSoftware: return "update the driver and firmware";
    case B::CheckMechanicals: return "check power cables and seating";
    case B::ContactSupport: return "contact support";
    case B::Workflow: return "reset the GPU; service if it recurs";
    case B::RecoveryAction: return "as the recovery action says";
  }
  return "contact support";
}

std::span<const XidRow> xid_table() { return kXids; }

const XidRow* find_xid(int code) {
  const auto it = std::lower_bound(kXids.begin(), kXids.end(), code,
                                   [](const XidRow& r, int c) { return r.code < c; });
  return it != kXids.end() && it->code == code ? &*it : nullptr;
}

std::string_view recovery_action_words(RecoveryAction a) {
  switch (a) {
    case RecoveryAction::None: return "no action";
    case RecoveryAction::GpuReset: return "reset the GPU";
    case RecoveryAction::NodeReboot: return "reboot";
    case RecoveryAction::DrainP2p: return "drain peer-to-peer traffic";
    case RecoveryAction::DrainAndReset: return "drain, then reset the GPU";
  }
  return "contact support";
}

std::optional<RecoveryAction> recovery_action_from_code(int code) {
  if (code < 0 || code > 4) return std::nullopt;
  return static_cast<RecoveryAction>(code);
}

std::string_view aer_file_name(AerFile f) {
  switch (f) {
    case AerFile::Correctable: return "aer_dev_correctable";
    case AerFile::NonFatal: return "aer_dev_nonfatal";
    case AerFile::Fatal: return "aer_dev_fatal";
  }
  return "aer_dev_correctable";
}

std::span<const AerKindRow> aer_table() { return kAerKinds; }

const AerKindRow* find_aer_kind(AerClass cls, std::string_view sysfs_name) {
  for (const auto& r : kAerKinds)
    if (r.cls == cls && r.sysfs_name == sysfs_name) return &r;
  return nullptr;
}

// Older pciutils printed bit 13 of CESta as "NonFatalErr" (the kernel's name), newer ones
// "AdvNonFatalErr": both are the same row.
const AerKindRow* find_aer_kind_lspci(AerClass cls, std::string_view lspci_name) {
  for (const auto& r : kAerKinds)
    if (r.cls == cls && !lspci_name.empty() && (r.lspci_name == lspci_name || r.sysfs_name == lspci_name)) return &r;
  return nullptr;
}

std::span<const ClockEventRow> clock_event_table() { return kClockEvents; }

}  // namespace gdsb::topo
