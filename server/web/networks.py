"""Client addresses grouped the way attackers hold them (docs/operations.md, "Abuse limits").

One person can have many addresses: every IPv6 customer gets a /64 at least (2**64 addresses), a
server or a small office often a run of IPv4 addresses. So every per-address limit counts a *host*
(IPv4: the address itself; IPv6: its /64) and, `factor` times looser, a *network* (IPv4 /24, IPv6 /48),
and the prefixes are settings. An IPv4 address written as IPv6 (`::ffff:192.0.2.1`, what a dual-stack
socket reports) is the IPv4 address.
"""

from __future__ import annotations

import functools
import ipaddress

from server.hub.limits import NETWORK_FACTOR

DEFAULT_IPV4 = (32, 24)  # host, network prefix lengths
DEFAULT_IPV6 = (64, 48)
CACHED_ADDRESSES = 65_536  # addresses whose keys are kept ready: a poll looks its address up once


class Grouping:
    """The host and the network an address belongs to, under the configured prefixes."""

    def __init__(
        self,
        ipv4: tuple[int, int] = DEFAULT_IPV4,
        ipv6: tuple[int, int] = DEFAULT_IPV6,
        factor: int = NETWORK_FACTOR,
    ) -> None:
        check_prefixes(ipv4, 32, "IPv4")
        check_prefixes(ipv6, 128, "IPv6")
        if factor < 1:
            raise ValueError(f"the network factor must be at least 1, got {factor}")
        self.ipv4, self.ipv6, self.factor = ipv4, ipv6, factor
        self.where = functools.lru_cache(maxsize=CACHED_ADDRESSES)(self._where)

    def _where(self, address: str) -> tuple[str, str]:
        """(host, network) of an address, e.g. ("2001:db8:1:2::/64", "2001:db8:1::/48")."""
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:  # not an IP (a unix socket's peer, "unknown"): its own host and network
            return address, address
        if ip.version == 6 and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        host, network = self.ipv4 if ip.version == 4 else self.ipv6
        return _prefix(ip, host), _prefix(ip, network)


def _prefix(ip: ipaddress.IPv4Address | ipaddress.IPv6Address, length: int) -> str:
    if length == ip.max_prefixlen:
        return str(ip)
    return str(ipaddress.ip_network(f"{ip}/{length}", strict=False))


def check_prefixes(prefixes: tuple[int, int], longest: int, family: str) -> None:
    host, network = prefixes
    if not 8 <= network <= host <= longest:
        raise ValueError(
            f"{family} prefixes must be HOST,NETWORK with 8 <= NETWORK <= HOST <= {longest}, "
            f"got {host},{network}"
        )


def banned_network(text: str, grouping: Grouping) -> str | None:
    """What a ban of `text` covers, in CIDR form: an address's host (IPv4: the address; IPv6: its
    /64), or a network as written; None when `text` is no address (a nick)."""
    try:
        return grouping.where(str(ipaddress.ip_address(text)))[0]
    except ValueError:
        pass
    try:
        return str(ipaddress.ip_network(text, strict=False))
    except ValueError:
        return None
