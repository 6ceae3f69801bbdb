# The version of this feed's packages, fastpath and luci-app-fastpath, and
# the only place it is set: package/fastpath/Makefile and luci-app/Makefile
# include this file, and make ipk (src/build/cross.sh, ipk.sh) reads it. So
# the SDK and make ipk give the same tree the same version,
# FASTPATH_VERSION-rFASTPATH_RELEASE, and opkg and apk order their packages
# by it alone. Raise FASTPATH_RELEASE for every build handed out (a new
# FASTPATH_VERSION starts again at release 1).
FASTPATH_VERSION:=0.1.0
FASTPATH_RELEASE:=1
