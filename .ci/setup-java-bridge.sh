#!/usr/bin/env bash
# Builds bridges/java (every version exact in its pom.xml files, from Maven Central): the JVM peers
# and the Spring AI JDBC stress harness. Their tests skip, naming this command, until it has run.
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -q -B -f bridges/java package
