"""Key and token formats, found by the maintained `detect-secrets` plugins, in process.

Implements the domain's `SecretScanner` port. The plugins are made once and only their pure
matching methods are called, so a scan touches no global settings, no files and no network
(detect-secrets' optional verification is never used) and is safe from many threads at once:

- every format plugin (AWS, Stripe, GitHub, GitLab, Slack, OpenAI, Twilio, SendGrid, npm, PyPI,
  Azure, IBM, JWTs, private keys, credentials in URLs, …) except public IP addresses, which are
  not secrets; JWTs are found where a token starts and checked by the plugin's own test;
- the keyword plugin with its configuration-file rules (``passwd=…``, ``api_key: …``);
- the two high-entropy plugins on unquoted tokens of 20 or more characters, keeping only those
  over the plugin's entropy limit that detect-secrets' own heuristics do not call a UUID,
  a sequence, a template or an id, and that are not plain numbers (card numbers have the
  domain's Luhn rule);
- a few formats detect-secrets 1.5 does not know yet (Google API keys, GitHub fine-grained and
  OpenAI project tokens, Stripe test and publishable-restricted keys).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.filters import heuristic
from detect_secrets.plugins.base import BasePlugin, RegexBasedDetector
from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.keyword import (
    CONFIG_DENYLIST_REGEX_TO_GROUP,
    DENYLIST,
    QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
    KeywordDetector,
)

NOT_SECRETS = frozenset({"Public IP (ipv4)"})
MIN_ENTROPY_TOKEN = 20
KEYWORD_WINDOWS = 16
WORD_RUN = 32
EXTRA_FORMATS = [
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}")),
    ("GitHub token", re.compile(r"\bgithub_pat_[0-9A-Za-z_]{22,}")),
    ("OpenAI key", re.compile(r"\bsk-(?:proj|svcacct|admin)-[0-9A-Za-z_\-]{20,}")),
    ("Stripe key", re.compile(r"\b[rs]k_(?:live|test)_[0-9A-Za-z]{16,}")),
]

# Two plugins' patterns try every start inside a run (`//.+/:_authToken=`, `sk-[…]*…`) and take
# seconds on 32,000 slashes or `sk-sk-sk-…`; the same formats, starting only where a token does.
LINEAR_REPLACEMENTS = {
    "NPM tokens": re.compile(
        r"(?<!/)//[^\s/]+(?:/[^\s/]+)*/:_authToken=\s*(?:npm_\S+|[A-Fa-f0-9-]{36})"
    ),
    "OpenAI Token": re.compile(
        r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]*?[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}"
    ),
}


class DetectSecretsScanner:
    """The `SecretScanner` the server uses."""

    def __init__(self) -> None:
        # Format patterns read the whole text at once (compiled MULTILINE, so `^`/`$` still mean a
        # line): a call per line per plugin costs half a second on 16,000 one-character lines.
        self._formats: list[tuple[str, Callable[[str], Iterable[str]]]] = []
        self._per_line: list[tuple[str, Callable[[str], Iterable[str]]]] = []
        classes: Mapping[str, type[BasePlugin]] = get_mapping_from_secret_type_to_class()
        entropy: list[tuple[str, Callable[[str], Iterable[str]]]] = []
        for secret_type, plugin_class in sorted(classes.items()):
            if secret_type in NOT_SECRETS:
                continue
            plugin: BasePlugin = plugin_class()
            if isinstance(plugin, JwtTokenDetector):
                self._formats.append((secret_type, _jwt))
            elif isinstance(plugin, KeywordDetector):
                self._per_line.append((secret_type, _keyword(plugin)))
            elif isinstance(plugin, HighEntropyStringsPlugin):
                entropy.append((secret_type, _entropy(plugin)))
            elif secret_type in LINEAR_REPLACEMENTS:
                self._formats.append((secret_type, LINEAR_REPLACEMENTS[secret_type].findall))
            elif isinstance(plugin, RegexBasedDetector):
                self._formats.append((secret_type, _multiline(plugin.denylist)))
        for name, pattern in EXTRA_FORMATS:
            self._formats.append((name, pattern.findall))
        self._per_line.extend(entropy)  # last, so a known format is named as such

    def find(self, text: str) -> str:
        for secret_type, check in self._formats:
            if any(True for _ in check(text)):
                return secret_type
        lines = dict.fromkeys(text.splitlines())  # each distinct line once
        for secret_type, check in self._per_line:
            for line in lines:
                if any(True for _ in check(line)):
                    return secret_type
        return ""


def _multiline(denylist: Iterable[re.Pattern[str]]) -> Callable[[str], Iterable[str]]:
    patterns = [re.compile(pattern.pattern, pattern.flags | re.MULTILINE) for pattern in denylist]

    def check(text: str) -> Iterable[str]:
        for pattern in patterns:
            yield from pattern.findall(text)

    return check


def _keyword(plugin: KeywordDetector) -> Callable[[str], Iterable[str]]:
    """`passwd=…` and `api_key: …` as in configuration files, or quoted as in code.

    The plugin's rules wrap each keyword in `\\w*` and backtrack badly (cubic time) on long runs
    of word characters, so they read only a short window from each keyword found (at most
    `KEYWORD_WINDOWS`), with every run of word characters in it cut to `WORD_RUN` characters:
    enough to see an assignment, and a 32,000-character word costs milliseconds, not minutes.
    """
    keyword = re.compile("|".join(DENYLIST))  # on lowered text: many times faster than IGNORECASE
    long_run = re.compile(rf"(\w{{{WORD_RUN}}})\w+")

    def check(line: str) -> Iterable[str]:
        line = line.lower()
        for index, found in enumerate(keyword.finditer(line)):
            if index == KEYWORD_WINDOWS:
                return
            window = long_run.sub(r"\1", line[found.start() : found.end() + 160])
            for rules in (CONFIG_DENYLIST_REGEX_TO_GROUP, QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP):
                yield from plugin.analyze_string(window, denylist_regex_to_group=rules)

    return check


JWT = re.compile(r"(?<![A-Za-z0-9_=-])eyJ[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+\.?[A-Za-z0-9_.+/=-]*")


def _jwt(line: str) -> Iterable[str]:
    """The plugin's own test of a token; its pattern may start inside a token and so backtracks
    quadratically on `eyJeyJ…`, this one starts only where a token does."""
    return filter(JwtTokenDetector.is_formally_valid, JWT.findall(line))


def _entropy(plugin: HighEntropyStringsPlugin) -> Callable[[str], Iterable[str]]:
    """Unquoted tokens over the plugin's limit (detect-secrets only reads quoted ones by default;
    its own unquoted mode swaps a regex on the shared plugin, which is not thread-safe)."""
    tokens = re.compile(f"[{re.escape(plugin.charset)}]{{{MIN_ENTROPY_TOKEN},}}")

    def check(line: str) -> Iterable[str]:
        for token in tokens.findall(line):
            if (
                token.isdigit()
                or plugin.calculate_shannon_entropy(token) <= plugin.entropy_limit
                or heuristic.is_potential_uuid(token)
                or heuristic.is_sequential_string(token)
                or heuristic.is_templated_secret(token)
                or heuristic.is_likely_id_string(token, line, plugin)
            ):
                continue
            yield token

    return check
