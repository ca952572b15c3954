#!/usr/bin/env bash
# Installs the code generators buf.gen.yaml runs (`make stubs`, tests/integration/test_stubs.py)
# from Debian's packages: protoc-gen-go, protoc-gen-go-grpc, protoc (protobuf-compiler, whose
# built-in generator writes Java) and grpc_java_plugin. Nothing happens when all are present;
# otherwise it needs root and apt-get, and says what to install when it cannot.
set -euo pipefail

missing=()
for tool in protoc-gen-go protoc-gen-go-grpc protoc grpc_java_plugin; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi
packages=(protoc-gen-go protoc-gen-go-grpc protobuf-compiler protobuf-compiler-grpc-java-plugin)
if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null; then
  echo "install-stub-plugins: missing ${missing[*]}; install the Debian packages ${packages[*]}" >&2
  exit 1
fi
echo "install-stub-plugins: installing ${packages[*]}" >&2
apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >&2
