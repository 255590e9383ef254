/** The typed socket.io client of docs/contract.md section 4 (one socket, renewed subscriptions on reconnect). */
export * from './client.ts';
