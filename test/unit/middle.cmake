# The middle end (model helpers, dependences, schedule, legality check, fusion, folding, allocation, mapping),
# tested on polytope models written as isl strings.
polyc_add_unittest(MiddleTests SOURCES MiddleTests.cpp LIBS polyc_map)
