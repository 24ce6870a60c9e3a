# Builds libpetscgpustream.so the PETSc way: compilers, flags and libraries come from PETSc's conf/variables.
#   Debian 12 stack (PETSc 3.18, Trilinos' Kokkos, Serial):  make
#   GPU stack (Kokkos CUDA, static):  source <gpu-stack>/build-env.sh   (the stack's build environment, as
#                                     scripts/build-gpu.sh sources it), then, with the stack unpacked in /opt/gpu-stack:
#                                     make KOKKOS_DIR=/opt/gpu-stack/kokkos [KOKKOSKERNELS_DIR=/opt/gpu-stack/kokkos-kernels]
# Kokkos-Kernels (the device ILU(0) and ICC(0) factors) is optional: KOKKOSKERNELS_DIR for a CUDA build, found next to
# Debian's Kokkos otherwise; KOKKOSKERNELS=0 builds without it (the factorizations then stay PETSc's, on the host).
# Objects, library and ex2 go to $(BUILD); `make clean` removes it, `make test-make` runs PETSc's KSP ex2 with the plugin.
PETSC_DIR ?= /usr/lib/petsc
BUILD     ?= build-make
.DEFAULT_GOAL := lib

include ${PETSC_DIR}/lib/petsc/conf/variables
include ${PETSC_DIR}/lib/petsc/conf/rules

# Same list as GPUSTREAM_SOURCES in CMakeLists.txt
SOURCES = petsc-registration.c \
          src/sys/options.c \
          src/sys/container.c \
          src/device/init.kokkos.cxx \
          src/device/vecaccess.kokkos.cxx \
          src/device/staging.kokkos.cxx \
          src/device/devicemat.kokkos.cxx \
          src/device/halo.kokkos.cxx \
          src/device/spmvref.c \
          src/stream/stream.kokkos.cxx \
          src/mat/gpustream/gpustream.c \
          src/mat/gpustream/aijreaders.c \
          src/mat/gpustream/hostvecs.c \
          src/mat/gpustream/coo.kokkos.cxx \
          src/mat/gpustream/factor.c \
          src/mat/gpustream/factor.kokkos.cxx \
          src/mat/gpustream/product.kokkos.cxx \
          src/mat/gpustream/graph.kokkos.cxx \
          src/ksp/pipecgfused/pipecgfused.c \
          src/ksp/pipecgfused/pipecgfused.kokkos.cxx \
          src/ksp/pipecgfused/pipecgfusedblock.kokkos.cxx \
          src/ksp/pipecgfused/pipecgfusedref.c \
          src/ksp/pipebcgsf/pipebcgsf.c \
          src/ksp/pipebcgsf/pipebcgsf.kokkos.cxx \
          src/ksp/pipebcgsf/pipebcgsfref.c \
          src/ksp/sgmresf/sgmresf.c \
          src/ksp/sgmresf/sgmresf.kokkos.cxx \
          src/ksp/sgmresf/sgmresfref.c \
          src/ksp/chebyshevf/chebyshevf.c \
          src/ksp/chebyshevf/chebyshevf.kokkos.cxx \
          src/ksp/chebyshevf/chebyshevfref.c \
          src/ksp/common/residualgap.c \
          src/ksp/common/rightpc.c \
          src/ksp/common/pcblocks.c \
          src/ksp/common/base.c \
          src/ksp/common/work.kokkos.cxx
OBJS = $(SOURCES:%=$(BUILD)/%.o)
LIB  = $(BUILD)/libpetscgpustream.so

# PETSc's variables add these to their own flags. Hidden visibility: only PETSC_EXTERN symbols leave the plugin
# (Debian's PETSc flags do not hide the rest). PETSc's C++ standard (c++11 on Debian) gives way to C++17, or C++20
# with Kokkos 5 (GS_CXXSTD below).
# The configure checks of CMakeLists.txt with PETSc's C compiler: -DGPUSTREAM_PETSC_NAME where cmake/probes/NAME.c
# compiles (signatures newer PETSc changed)
gs_probe = $(shell $(PCC) $(PCC_FLAGS) $(PETSC_CC_INCLUDES) -Werror=incompatible-pointer-types -c -o /dev/null $(1) \
             >/dev/null 2>&1 && echo -DGPUSTREAM_PETSC_$(basename $(notdir $(1))))
GS_DEFS   := $(foreach p,$(wildcard cmake/probes/*.c),$(call gs_probe,$(p)))
# OWN_TEAM_LAUNCH=1 (the default): with Kokkos 4 and CUDA the team kernels go through the plugin's own launch, as
# CMake's GPUSTREAM_OWN_TEAM_LAUNCH; 0: Kokkos' parallel_for (the define means nothing elsewhere)
OWN_TEAM_LAUNCH ?= 1
GS_LAUNCH_DEFS = $(if $(filter 1,$(OWN_TEAM_LAUNCH)),-DGPUSTREAM_OWN_TEAM_LAUNCH)
CPPFLAGS   = -Iinclude -Isrc/sys -Isrc/device $(GS_DEFS) $(GS_KK_DEFS) $(GS_LAUNCH_DEFS)
CXXPPFLAGS = $(CPPFLAGS)
CFLAGS     = -fvisibility=hidden -Wall -Wno-unknown-pragmas
CXXFLAGS   = -std=$(GS_CXXSTD) -fvisibility=hidden -fvisibility-inlines-hidden
CXX_FLAGS := $(filter-out -std=%,$(CXX_FLAGS))

ifdef KOKKOS_DIR
  # A CUDA build of Kokkos: its .kokkos.cxx files go through its nvcc_wrapper (PETSc's variables set CXX to mpicxx,
  # overriding the environment's), with the options of Kokkos::kokkoscore in lib*/cmake/Kokkos/KokkosTargets.cmake.
  # nvcc_wrapper is no MPI wrapper: Open MPI's mpicxx tells the include flags.
  CXX          := $(KOKKOS_DIR)/bin/nvcc_wrapper
  KOKKOS_INC   ?= $(KOKKOS_DIR)/include $(if $(KOKKOSKERNELS_DIR),$(KOKKOSKERNELS_DIR)/include)
  KOKKOS_FLAGS ?= -expt-extended-lambda -Wext-lambda-captures-this -arch=sm_90 $(shell $(CXX_LINKER) --showme:compile)
  # nvcc knows no -MP and names the -MMD target after the source: name it here (a deleted header needs `make clean`)
  CXX_DEPFLAGS  = -MMD -MT $@ -MF $(@:.o=.d)
  KOKKOS_LIBS  ?= $(if $(KOKKOSKERNELS_DIR),$(wildcard $(KOKKOSKERNELS_DIR)/lib*/libkokkoskernels.a)) \
                  $(wildcard $(KOKKOS_DIR)/lib*/libkokkoscontainers.a $(KOKKOS_DIR)/lib*/libkokkoscore.a) -lcudart -lcuda -ldl
else
  # Debian's Kokkos: Trilinos' in include/trilinos with libtrilinos_kokkoscore (Debian 12), or in include/kokkos with
  # libkokkoscore (newer Trilinos, and the standalone Kokkos)
  KOKKOS_INC   ?= $(firstword $(patsubst %/Kokkos_Core.hpp,%,$(wildcard /usr/include/trilinos/Kokkos_Core.hpp /usr/include/kokkos/Kokkos_Core.hpp)) /usr/include/trilinos)
  KOKKOS_LIBS  ?= $(if $(filter /usr/include/kokkos,$(KOKKOS_INC)),-lkokkoscore,-ltrilinos_kokkoscore)
  # Kokkos-Kernels next to it: Trilinos' (libtrilinos_kokkoskernels, which needs Kokkos' containers), or a standalone one
  GS_KK_LIB    := $(notdir $(firstword $(wildcard /usr/lib/*/libtrilinos_kokkoskernels.so /usr/lib/*/libkokkoskernels.so)))
  ifneq ($(KOKKOSKERNELS),0)
    ifneq ($(and $(GS_KK_LIB),$(wildcard $(addsuffix /KokkosSparse_spiluk.hpp,$(KOKKOS_INC) /usr/include/trilinos))),)
      GS_KK_DEFS   := -DGPUSTREAM_HAVE_KOKKOSKERNELS
      KOKKOS_INC   := $(KOKKOS_INC) $(if $(wildcard $(addsuffix /KokkosSparse_spiluk.hpp,$(KOKKOS_INC))),,/usr/include/trilinos)
      KOKKOS_LIBS  := $(if $(filter libtrilinos_%,$(GS_KK_LIB)),-ltrilinos_kokkoskernels -ltrilinos_kokkoscontainers,-lkokkoskernels -lkokkoscontainers) $(KOKKOS_LIBS)
    endif
  endif
endif
ifdef KOKKOS_DIR
  ifdef KOKKOSKERNELS_DIR
    ifneq ($(KOKKOSKERNELS),0)
      GS_KK_DEFS := -DGPUSTREAM_HAVE_KOKKOSKERNELS
    endif
  endif
endif
# A Kokkos with the OpenMP backend needs it at compile and link time
GS_KOKKOS_OPENMP := $(shell grep -l '^\#define KOKKOS_ENABLE_OPENMP' $(wildcard $(addsuffix /KokkosCore_config.h,$(KOKKOS_INC))) 2>/dev/null)
KOKKOS_FLAGS     += $(if $(GS_KOKKOS_OPENMP),-fopenmp)
KOKKOS_LIBS      += $(if $(GS_KOKKOS_OPENMP),-fopenmp)
# The C++ standard: C++20 from Kokkos 5 on (its version from KokkosCore_config.h), else C++17
GS_KOKKOS_VERSION := $(firstword $(shell sed -n 's/^\#define KOKKOS_VERSION \([0-9]*\).*/\1/p' $(wildcard $(addsuffix /KokkosCore_config.h,$(KOKKOS_INC))) 2>/dev/null))
GS_CXXSTD         := $(if $(GS_KOKKOS_VERSION),$(shell [ $(GS_KOKKOS_VERSION) -ge 50000 ] && echo c++20 || echo c++17),c++17)

lib: $(LIB)

# PETSc's PETSC_COMPILE_SINGLE and PETSC_CXXCOMPILE_SINGLE, writing to $(BUILD) instead of next to the source
$(BUILD)/%.c.o: %.c
	@$(MKDIR) $(@D)
	$(PCC) -c -o $@ $(PCC_FLAGS) $(CFLAGS) $(CCPPFLAGS) $(C_DEPFLAGS) $<

$(BUILD)/%.cxx.o: %.cxx
	@$(MKDIR) $(@D)
	$(CXX) -c -o $@ $(CXX_FLAGS) $(CXXFLAGS) $(CXXCPPFLAGS) $(addprefix -isystem ,$(KOKKOS_INC)) $(KOKKOS_FLAGS) $(CXX_DEPFLAGS) $<

# Linked by PETSc's C++ linker (mpicxx; the GPU stack's Kokkos has no relocatable device code, so no nvcc link step).
# --exclude-libs keeps a static Kokkos private to the plugin, so it never clashes with another Kokkos in the process.
$(LIB): $(OBJS)
	$(CXXLINKER) -shared -o $@ $^ -Wl,--exclude-libs,ALL $(KOKKOS_LIBS) $(PETSC_LIB)

# `make clean` is PETSc's: it removes CLEANDIRS, and PETSc's usual scratch files (*.o, *.d, core, *~ ...) here
CLEANDIRS = $(BUILD)

# ex2 from the tutorials PETSc ships (Debian: libpetsc3.18-dev-examples), compiled the PETSc way unless EX2 names one
# (CMake's test of this makefile passes its own)
PETSC_TUTORIALS ?= $(PETSC_DIR)/share/petsc/examples/src/ksp/ksp/tutorials
EX2 ?= $(BUILD)/ex2
$(BUILD)/ex2: $(PETSC_TUTORIALS)/ex2.c
	@$(MKDIR) $(@D)
	$(PCC) -o $@ $(PCC_FLAGS) $(CCPPFLAGS) $< $(PETSC_LIB)

test-make: $(LIB) $(EX2)
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 $(EX2) -dll_append $(abspath $(LIB)) \
	  -mat_type gpustream -ksp_type pipecgfused -pc_type jacobi -ksp_converged_reason | awk '{ print } /CONVERGED/ { ok = 1 } END { exit !ok }'

.PHONY: lib test-make
-include $(OBJS:.o=.d)
