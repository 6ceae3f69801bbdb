package platform

// chip is one row of the chip table: how a chip is recognised and whether
// the kernel has a flowtable hardware-offload engine for it upstream.
type chip struct {
	Name    string // lower-case chip name reported as Info.SoC
	Display string // as people write it, e.g. "MT7621"
	Vendor  string
	Family  string // the OpenWrt target that carries it, e.g. "ramips/mt7621"

	// Compatible lists the device-tree compatible strings that prove this
	// chip. A trailing "*" matches any suffix ("mediatek,mt7986*" covers
	// mt7986a and mt7986b).
	Compatible []string
	// Targets lists DISTRIB_TARGET values that identify the chip family
	// without a device tree. Only used for chips that cannot offload in
	// hardware: a target alone never proves an offload engine.
	Targets []string

	HWOffload bool
	Engine    string // e.g. "MediaTek PPE"
	// FlowCounters: the engine counts each hardware flow's bytes, so
	// conntrack keeps counting offloaded traffic (has_accounting in
	// mtk_eth_soc.c, read from Linux 6.4).
	FlowCounters bool
	Drivers      []string // ethernet drivers that feed the engine
	// Limit says, for chips without an engine, why; it completes
	// "<chip> (<family>) ... : software offload only".
	Limit string
}

// nameFromCompatible marks rows whose chip name is taken from the matching
// compatible string (after the comma), for families with many members.
const nameFromCompatible = ""

// socTable is every chip detection knows. Order matters only for rows whose
// compatible patterns overlap: the first match wins.
var socTable = []chip{
	// MediaTek chips with a Packet Processing Engine driven by mtk_soc_eth
	// (drivers/net/ethernet/mediatek/mtk_ppe*.c).
	{Name: "mt7621", Display: "MT7621", Vendor: "MediaTek", Family: "ramips/mt7621",
		Compatible: []string{"mediatek,mt7621-soc", "mediatek,mt7621"},
		HWOffload:  true, Engine: "MediaTek PPE", Drivers: []string{"mtk_soc_eth"}},
	{Name: "mt7622", Display: "MT7622", Vendor: "MediaTek", Family: "mediatek/mt7622",
		Compatible: []string{"mediatek,mt7622"},
		HWOffload:  true, Engine: "MediaTek PPE", Drivers: []string{"mtk_soc_eth"}, FlowCounters: true},
	{Name: "mt7623", Display: "MT7623", Vendor: "MediaTek", Family: "mediatek/mt7623",
		Compatible: []string{"mediatek,mt7623*"},
		HWOffload:  true, Engine: "MediaTek PPE", Drivers: []string{"mtk_soc_eth"}},
	{Name: "mt7981", Display: "MT7981", Vendor: "MediaTek", Family: "mediatek/filogic",
		Compatible: []string{"mediatek,mt7981*"},
		HWOffload:  true, Engine: "MediaTek PPE", Drivers: []string{"mtk_soc_eth"}, FlowCounters: true},
	{Name: "mt7986", Display: "MT7986", Vendor: "MediaTek", Family: "mediatek/filogic",
		Compatible: []string{"mediatek,mt7986*"},
		HWOffload:  true, Engine: "MediaTek PPE", Drivers: []string{"mtk_soc_eth"}, FlowCounters: true},
	{Name: "mt7988", Display: "MT7988", Vendor: "MediaTek", Family: "mediatek/filogic",
		Compatible: []string{"mediatek,mt7988*"},
		HWOffload:  true, Engine: "MediaTek PPE", Drivers: []string{"mtk_soc_eth"}, FlowCounters: true},
	{Name: "en7581", Display: "EN7581", Vendor: "Airoha", Family: "airoha/an7581",
		Compatible: []string{"airoha,en7581*", "airoha,an7581*"},
		HWOffload:  true, Engine: "Airoha PPE", Drivers: []string{"airoha_eth"}},

	// MediaTek chips without an engine. mtk_soc_eth drives them too (and the
	// older ramips driver uses the same name), and it advertises
	// hw-tc-offload, so neither the driver nor that feature is proof.
	{Name: "mt7628", Display: "MT7628", Vendor: "MediaTek", Family: "ramips/mt76x8",
		Compatible: []string{"mediatek,mt7628*", "mediatek,mt7688*", "ralink,mt7628*", "ralink,mt7688*"},
		Targets:    []string{"ramips/mt76x8"},
		Limit:      "has no flow-offload engine (its ethernet driver advertises hw-tc-offload, which is no flowtable engine)"},
	{Name: "mt2701", Display: "MT2701", Vendor: "MediaTek",
		Compatible: []string{"mediatek,mt2701*"},
		Limit:      "has no flow-offload engine (its ethernet driver advertises hw-tc-offload, which is no flowtable engine)"},
	{Name: "mt7620", Display: "MT7620", Vendor: "MediaTek", Family: "ramips/mt7620",
		Compatible: []string{"ralink,mt7620*", "mediatek,mt7620*"},
		Targets:    []string{"ramips/mt7620"},
		Limit:      "has no flow-offload engine driver upstream"},

	// Qualcomm Atheros MIPS chips (ag71xx ethernet): no engine at all.
	{Name: nameFromCompatible, Vendor: "Qualcomm Atheros", Family: "ath79",
		Compatible: []string{"qca,qca9*", "qca,ar7*", "qca,ar9*", "qca,tp9343"},
		Targets:    []string{"ath79/*"},
		Limit:      "has no flow-offload engine"},
	// Qualcomm ARM chips whose offload engines have no upstream flowtable
	// driver (the vendor's NSS/ESS SDKs are out of tree).
	{Name: nameFromCompatible, Vendor: "Qualcomm", Family: "ipq40xx",
		Compatible: []string{"qcom,ipq401*", "qcom,ipq402*"},
		Targets:    []string{"ipq40xx/*"},
		Limit:      "has no flow-offload engine driver upstream"},
	{Name: nameFromCompatible, Vendor: "Qualcomm", Family: "ipq806x",
		Compatible: []string{"qcom,ipq806*"},
		Targets:    []string{"ipq806x/*"},
		Limit:      "has no flow-offload engine driver upstream"},
	{Name: nameFromCompatible, Vendor: "Qualcomm", Family: "qualcommax",
		Compatible: []string{"qcom,ipq807*", "qcom,ipq60*", "qcom,ipq50*"},
		Targets:    []string{"qualcommax/*"},
		Limit:      "has no flow-offload engine driver upstream"},

	// PCs: no device tree, recognised by the target alone.
	{Name: "x86_64", Display: "x86/64", Family: "x86/64",
		Targets: []string{"x86/64"},
		Limit:   "has no flow-offload engine"},
	{Name: "x86", Display: "x86", Family: "x86",
		Targets: []string{"x86/*"},
		Limit:   "has no flow-offload engine"},
}

// deviceOffloadDrivers are ethernet drivers whose devices take flowtable
// hardware offload on any platform (NICs with their own engine).
var deviceOffloadDrivers = map[string]string{
	"mlx5_core": "Mellanox mlx5",
}
