/**
 * @module main — the operator console (served at /admin on the admin listener): a client of the
 * admin API only.
 */
import './console.css';

const app = document.getElementById('app');
if (app !== null) app.textContent = 'Bourse operator console';
