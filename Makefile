# The two commands of the README: `make demo` and `make check`. Everything else is a helper of theirs.
BUILD ?= build
CMAKE_FLAGS ?=

.PHONY: all deps build check demo clean

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD)

check: build
	@scripts/run-tests.sh $(BUILD)

demo: build
	@scripts/demo.sh $(BUILD)
	@examples/optical-flow/demo.sh $(BUILD)

clean:
	rm -rf $(BUILD)
