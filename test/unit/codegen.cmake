# Code generation: the shared printers (CodeWriter, ExprPrinter, IslAstPrinter, ProgramInterface) and
# the CPU target, on models built by hand.
polyc_add_unittest(CodegenTests SOURCES CodegenTests.cpp LIBS polyc_codegen_cpu)
