# shellcheck shell=sh
# The OpenWrt package architectures fastpath is built for, and how Go and
# qemu-user reach each. Sourced by cross.sh and test-cross.sh.

ARCHES="mips_24kc mipsel_24kc aarch64_cortex-a53 arm_cortex-a7_neon-vfpv4 x86_64"

# goenv PKGARCH prints the GOARCH/GOMIPS/GOARM words for a package
# architecture (the pkgarch is OpenWrt's package architecture name).
goenv() {
	case "$1" in
	mips_24kc) echo "GOARCH=mips GOMIPS=softfloat" ;;
	mipsel_24kc) echo "GOARCH=mipsle GOMIPS=softfloat" ;;
	aarch64_cortex-a53) echo "GOARCH=arm64" ;;
	arm_cortex-a7_neon-vfpv4) echo "GOARCH=arm GOARM=7" ;;
	x86_64) echo "GOARCH=amd64" ;;
	*)
		echo "unknown package architecture '$1' (known: $ARCHES)" >&2
		return 1
		;;
	esac
}

# qemu_user PKGARCH prints the qemu-user binary that runs it here, or "-"
# where it runs natively.
qemu_user() {
	case "$1" in
	mips_24kc) echo qemu-mips-static ;;
	mipsel_24kc) echo qemu-mipsel-static ;;
	aarch64_cortex-a53) echo qemu-aarch64-static ;;
	arm_cortex-a7_neon-vfpv4) echo qemu-arm-static ;;
	*) echo - ;;
	esac
}
