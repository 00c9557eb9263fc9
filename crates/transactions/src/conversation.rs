//! Conversations rather than exchanges: protocols in which either side may
//! speak unprompted, told by the first bytes of one of their messages.
//!
//! In a conversation a pause inside what one side sends is no one waiting
//! for the rest: a keystroke in a terminal, a chat line, a pushed update, a
//! report the other side never asked for. Once a connection shows one, its
//! pauses are the talkers' own pace, as a client's think time is.

/// The signs of a conversation, each read from a message's first bytes.
const SIGNS: [fn(&[u8]) -> bool; 11] = [
    ssh_identification,
    telnet_negotiation,
    irc_registration,
    vnc_version,
    xmpp_stream,
    mqtt_connect,
    bgp_marker,
    dnp3_frame,
    http_switching_protocols,
    redis_subscription,
    ftp_preliminary_reply,
];

/// Whether `payload`, the start of a message, shows its connection to be a
/// conversation: SSH, Telnet, IRC, VNC, XMPP, MQTT, BGP or DNP3; HTTP
/// switching to another protocol (WebSocket and the like); a Redis
/// subscription or monitor, after which the server pushes; or an FTP
/// preliminary reply, whose final reply waits on a transfer over another
/// connection.
pub fn starts(payload: &[u8]) -> bool {
    payload
        .first()
        .is_some_and(|first| FIRST_BYTES.contains(first))
        && SIGNS.iter().any(|sign| sign(payload))
}

/// The bytes some sign begins with: most payloads begin otherwise, so
/// asking of every segment costs little.
const FIRST_BYTES: &[u8] = b"SsNCR<H*pPmM1\xff\x10\x05";

/// RFC 4253: each side first sends `SSH-protoversion-softwareversion`.
fn ssh_identification(payload: &[u8]) -> bool {
    payload.starts_with(b"SSH-")
}

/// RFC 854: IAC followed by WILL, WONT, DO or DONT.
fn telnet_negotiation(payload: &[u8]) -> bool {
    matches!(payload, [0xff, 0xfb..=0xfe, ..])
}

/// RFC 2812 and IRCv3: a client registers with NICK, or asks for capabilities first.
fn irc_registration(payload: &[u8]) -> bool {
    payload.starts_with(b"NICK ") || payload.starts_with(b"CAP LS")
}

/// RFC 6143: the server's ProtocolVersion, `RFB 003.008`.
fn vnc_version(payload: &[u8]) -> bool {
    payload.starts_with(b"RFB 00")
}

/// RFC 6120: a stream header, after an optional XML declaration.
fn xmpp_stream(payload: &[u8]) -> bool {
    const HEADER: &[u8] = b"<stream:stream";
    payload.starts_with(b"<")
        && payload
            .windows(HEADER.len())
            .take(64)
            .any(|window| window == HEADER)
}

/// MQTT: a CONNECT packet, its remaining length (one to four bytes), then
/// the protocol name `MQTT` (3.1.1, 5) or `MQIsdp` (3.1).
fn mqtt_connect(payload: &[u8]) -> bool {
    let Some((&0x10, rest)) = payload.split_first() else {
        return false;
    };
    let length_bytes = rest.iter().take(4).take_while(|&&b| b & 0x80 != 0).count() + 1;
    rest.get(length_bytes..).is_some_and(|name| {
        name.starts_with(b"\x00\x04MQTT") || name.starts_with(b"\x00\x06MQIsdp")
    })
}

/// RFC 4271: every BGP message starts with 16 bytes of ones.
fn bgp_marker(payload: &[u8]) -> bool {
    payload.len() >= 19 && payload[..16].iter().all(|&b| b == 0xff)
}

/// IEEE 1815: a DNP3 link-layer frame starts 0x05 0x64; outstations send
/// unsolicited responses.
fn dnp3_frame(payload: &[u8]) -> bool {
    payload.starts_with(&[0x05, 0x64])
}

/// RFC 9110: `101 Switching Protocols`, after which the connection speaks another protocol.
fn http_switching_protocols(payload: &[u8]) -> bool {
    crate::name::http_status_code(payload) == Some(101)
}

/// A Redis SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE or MONITOR, as a RESP array
/// (`*2\r\n$9\r\nsubscribe\r\n...`) or inline: from then on the server pushes.
fn redis_subscription(payload: &[u8]) -> bool {
    const PUSHING: [&[u8]; 4] = [b"subscribe", b"psubscribe", b"ssubscribe", b"monitor"];
    let command = match payload.first() {
        Some(b'*') => resp_first_string(payload),
        _ => Some(payload),
    };
    command.is_some_and(|command| {
        PUSHING.iter().any(|name| {
            command
                .get(..name.len())
                .is_some_and(|start| start.eq_ignore_ascii_case(name))
                && matches!(command.get(name.len()), None | Some(b' ' | b'\r' | b'\n'))
        })
    })
}

/// The first bulk string of a RESP array: `*N\r\n$LEN\r\nSTRING\r\n`.
fn resp_first_string(payload: &[u8]) -> Option<&[u8]> {
    let mut lines = payload.split(|&b| b == b'\n');
    let count = lines.next()?.strip_prefix(b"*")?;
    let length = lines.next()?.strip_prefix(b"$")?;
    let digits = |line: &[u8]| {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        !line.is_empty() && line.iter().all(u8::is_ascii_digit)
    };
    if !digits(count) || !digits(length) {
        return None;
    }
    let string = lines.next()?;
    Some(string.strip_suffix(b"\r").unwrap_or(string))
}

/// RFC 959: a reply of 1yz is preliminary (`150 Opening data connection`);
/// the final reply follows once the transfer it announced is done.
fn ftp_preliminary_reply(payload: &[u8]) -> bool {
    matches!(payload, [b'1', b'0'..=b'9', b'0'..=b'9', b' ' | b'-', ..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_words_of_conversations_are_known() {
        for payload in [
            &b"SSH-2.0-OpenSSH_9.6\r\n"[..],
            &[0xff, 0xfd, 0x18, 0xff, 0xfd, 0x20],
            b"NICK alice\r\nUSER alice 0 * :Alice\r\n",
            b"CAP LS 302\r\n",
            b"RFB 003.008\n",
            b"<?xml version='1.0'?><stream:stream to='example.com' xmlns='jabber:client'>",
            b"\x10\x1a\x00\x04MQTT\x04\x02\x00\x3c\x00\x0eclient",
            b"\x10\x82\x01\x00\x06MQIsdp\x03",
            &[[0xffu8; 16].as_slice(), &[0x00, 0x13, 0x04]].concat(),
            &[0x05, 0x64, 0x0b, 0xc4, 0x01, 0x00],
            b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n",
            b"*2\r\n$9\r\nSUBSCRIBE\r\n$4\r\nnews\r\n",
            b"*1\r\n$7\r\nmonitor\r\n",
            b"psubscribe news.*\r\n",
            b"150 Opening BINARY mode data connection\r\n",
        ] {
            assert!(starts(payload), "{:?}", String::from_utf8_lossy(payload));
        }
    }

    #[test]
    fn exchanges_are_not_conversations() {
        for payload in [
            &b"GET / HTTP/1.1\r\nHost: x\r\n"[..],
            b"HTTP/1.1 200 OK\r\n",
            b"HTTP/1.1 100 Continue\r\n",
            &[22, 3, 1, 0, 200, 1],
            b"*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n",
            b"subscribers 12\r\n",
            b"220 mail.example.com ESMTP\r\n",
            b"EHLO client\r\n",
            b"<?xml version='1.0'?><soap:Envelope>",
            b"\x10\x1a\x00\x04HTTP",
            &[0xff, 0x01],
            &[0xff; 12],
            b"1234567",
            b"",
        ] {
            assert!(!starts(payload), "{:?}", String::from_utf8_lossy(payload));
        }
    }
}
