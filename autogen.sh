#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Generates configure and Makefile.in from configure.ac and Makefile.am.
set -e
cd "$(dirname "$0")"
autoreconf --install --force
