#!/usr/bin/env bash
# Brings the Bicep CLI from NuGet (package Azure.Bicep.CommandLine.linux-x64, version pinned in
# tools/bicep/bicep-cli.csproj) into the NuGet cache with the .NET SDK, and prints its path.
# The Bicep compiler test finds it there (tests/support/bicep-cli.ts) when BICEP_PATH, `bicep` on
# PATH and ~/.azure/bin/bicep are all absent. Idempotent: a second run restores nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
project=tools/bicep/bicep-cli.csproj
if ! command -v dotnet >/dev/null 2>&1; then
  echo "fetch-bicep: the .NET SDK (dotnet) is not installed; cannot restore $project" >&2
  exit 1
fi
version=$(sed -n 's:.*<BicepVersion>\(.*\)</BicepVersion>.*:\1:p' "$project")
DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 dotnet restore "$project" --verbosity quiet >&2
packages=${NUGET_PACKAGES:-$HOME/.nuget/packages}
cli="$packages/azure.bicep.commandline.linux-x64/$version/tools/bicep"
if [ ! -f "$cli" ]; then
  echo "fetch-bicep: restore finished but $cli is missing" >&2
  exit 1
fi
chmod +x "$cli"
echo "$cli"
