//! Which end of a connection whose handshake the capture missed is the
//! server: the one on a port a service is registered on (IANA's service
//! name and port number registry), as Zeek's `likely_server_ports` has it.

/// Ports from 1024 up on which servers of common protocols listen. Below
/// 1024 every port is a system port, bound only by servers.
const REGISTERED: [u16; 40] = [
    1080,  // SOCKS
    1194,  // OpenVPN
    1433,  // Microsoft SQL Server
    1521,  // Oracle
    1723,  // PPTP
    1883,  // MQTT
    2049,  // NFS
    2181,  // ZooKeeper
    2375,  // Docker
    2404,  // IEC 60870-5-104
    3128,  // HTTP proxy (Squid)
    3260,  // iSCSI
    3306,  // MySQL
    3389,  // RDP
    4369,  // Erlang port mapper
    5060,  // SIP
    5222,  // XMPP client
    5269,  // XMPP server
    5432,  // PostgreSQL
    5601,  // Kibana
    5672,  // AMQP
    5900,  // VNC
    5984,  // CouchDB
    6379,  // Redis
    6443,  // Kubernetes API
    6653,  // OpenFlow
    6667,  // IRC
    8080,  // HTTP alternate
    8443,  // HTTPS alternate
    8883,  // MQTT over TLS
    9042,  // Cassandra
    9092,  // Kafka
    9200,  // Elasticsearch
    9418,  // git
    11211, // memcached
    20000, // DNP3
    27017, // MongoDB
    44818, // EtherNet/IP
    47808, // BACnet
    50000, // SAP, IBM DB2
];

/// Below this, every port is a system port (RFC 6335, 6).
const FIRST_USER_PORT: u16 = 1024;

/// Whether `port` is one a server listens on.
pub fn is_service_port(port: u16) -> bool {
    port < FIRST_USER_PORT || REGISTERED.contains(&port)
}

/// Of two ports, whether `a` is more likely the client's than `b`: `b` is
/// a service's and `a` is not; failing that, `a` is the higher, as
/// ephemeral ports are.
pub fn more_likely_client(a: u16, b: u16) -> bool {
    match (is_service_port(a), is_service_port(b)) {
        (false, true) => true,
        (true, false) => false,
        _ => a >= b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_service_port_is_the_servers_whichever_is_higher() {
        assert!(more_likely_client(1167, 20000));
        assert!(more_likely_client(50123, 443));
        assert!(!more_likely_client(3306, 61000));
    }

    #[test]
    fn between_two_ports_of_no_service_the_higher_is_the_clients() {
        assert!(more_likely_client(40000, 9999));
        assert!(!more_likely_client(9999, 40000));
    }
}
