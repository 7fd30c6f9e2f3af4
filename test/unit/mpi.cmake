# The runtime's MPI layer: the ranks' blocks (no MPI process needed; the exchanges run in test/run/mpi).
if(TARGET polyc_runtime_mpi)
  polyc_add_unittest(RuntimeMpiTests SOURCES RuntimeMpiTests.cpp LIBS polyc_runtime_mpi)
endif()
