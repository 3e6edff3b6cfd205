//! The server's clients by id (Redis's `server.clients`), and the one whose
//! command is running taken out of its slot.
//!
//! A command's handler gets `&mut Server` and `&mut Client` at once, so the
//! running client cannot stay borrowed inside the server's table. It used to
//! be removed from the table and inserted again around every command: two
//! writes to the hash table per command (under callgrind, about 110
//! instructions of a GET's 1,100). Here its slot stays and only the box is
//! taken ([`ClientMap::take`]) and put back ([`ClientMap::put_back`]), two
//! lookups. For everything else the running client is absent, as before:
//! CLIENT LIST and the other readers see the other clients only.

use std::collections::HashMap;

use super::client::{Client, ClientId};

/// Client ids are the server's own sequence numbers, not input an attacker
/// chooses: one multiply spreads them over the table (SipHash cost more than
/// the rest of the client lookup each command makes).
#[derive(Clone, Copy, Default)]
pub(crate) struct BuildIdHasher;

pub(crate) struct IdHasher(u64);

impl std::hash::BuildHasher for BuildIdHasher {
    type Hasher = IdHasher;
    fn build_hasher(&self) -> IdHasher {
        IdHasher(0)
    }
}

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        // Fibonacci hashing: the high bits (hashbrown's tags) vary too.
        self.0.wrapping_mul(0x9e37_79b9_7f4a_7c15)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) ^ b as u64;
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }
}

/// Connected clients; a slot is empty while its client's command runs.
#[derive(Default)]
pub(crate) struct ClientMap {
    slots: HashMap<ClientId, Option<Box<Client>>, BuildIdHasher>,
    /// Slots whose client is taken out (a command, and the commands of other
    /// clients a busy script lets in).
    taken: usize,
}

impl ClientMap {
    pub fn insert(&mut self, id: ClientId, client: Box<Client>) {
        if let Some(None) = self.slots.insert(id, Some(client)) {
            self.taken -= 1;
        }
    }

    /// Clients present (a running one not counted).
    pub fn len(&self) -> usize {
        self.slots.len() - self.taken
    }

    /// The client leaves. A client whose command is running stays: its
    /// command puts it back, as when it was not in the table at all.
    pub fn remove(&mut self, id: ClientId) -> Option<Box<Client>> {
        match self.slots.get(&id) {
            Some(Some(_)) => self.slots.remove(&id).flatten(),
            _ => None,
        }
    }

    pub fn get(&self, id: ClientId) -> Option<&Client> {
        self.slots.get(&id)?.as_deref()
    }

    pub fn get_mut(&mut self, id: ClientId) -> Option<&mut Client> {
        self.slots.get_mut(&id)?.as_deref_mut()
    }

    pub fn contains(&self, id: ClientId) -> bool {
        self.get(id).is_some()
    }

    /// Every client present.
    pub fn values(&self) -> impl Iterator<Item = &Client> {
        self.slots.values().filter_map(|c| c.as_deref())
    }

    /// Takes `id` out of its slot for its command.
    pub fn take(&mut self, id: ClientId) -> Option<Box<Client>> {
        let client = self.slots.get_mut(&id)?.take()?;
        self.taken += 1;
        Some(client)
    }

    /// Puts back a client [`ClientMap::take`] took out.
    pub fn put_back(&mut self, id: ClientId, client: Box<Client>) {
        let slot = self.slots.entry(id).or_default();
        if slot.is_none() {
            self.taken -= 1;
        }
        *slot = Some(client);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::client::ConnectInfo;

    fn client(id: ClientId) -> Box<Client> {
        Box::new(Client::new(id, ConnectInfo::in_process()))
    }

    /// A running client is absent for every reader, survives a removal
    /// during its command (as it did when it was out of the table), and is
    /// present again once put back.
    #[test]
    fn a_taken_client_is_absent_until_put_back() {
        let mut clients = ClientMap::default();
        clients.insert(1, client(1));
        clients.insert(2, client(2));
        let running = clients.take(1).unwrap();
        assert!(clients.take(1).is_none());
        assert!(clients.get(1).is_none() && clients.get_mut(1).is_none());
        assert!(!clients.contains(1) && clients.contains(2));
        assert_eq!(clients.len(), 1);
        assert_eq!(clients.values().map(|c| c.id).collect::<Vec<_>>(), [2]);
        assert!(clients.remove(1).is_none());
        clients.put_back(1, running);
        assert_eq!(clients.len(), 2);
        assert_eq!(clients.get(1).map(|c| c.id), Some(1));
        assert_eq!(clients.remove(2).map(|c| c.id), Some(2));
        assert_eq!(clients.len(), 1);
    }
}
