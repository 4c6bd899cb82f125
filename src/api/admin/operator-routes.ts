/**
 * @module operator-routes — sessions and named operators over the admin API (operators.ts):
 * `session/open` (the token and, for the roles that move money, a TOTP code), `session/close`,
 * and, for admins, `operators/list | add | remove`.
 */
import { param, paramText, type Route } from '../http/types.ts';
import { readChoice } from '../edge/readers.ts';
import { fail, ok } from './admin-reply.ts';
import { bearer, ROLES, SECOND_FACTOR_ROLES, type OperatorAccess } from './operators.ts';

/** The paths anyone may call: they are how one signs in. */
export const SESSION_PATHS: readonly string[] = ['/admin/session/open', '/admin/session/close'];

/** The paths of operator-routes that only read. */
export const OPERATOR_READ_PATHS: readonly string[] = ['/admin/operators/list'];

export function operatorRoutes(access: OperatorAccess): Route[] {
  return [
    {
      /** Authorization: Bearer <operator token>, [code] (TOTP, for operator and admin): a session. */
      path: '/admin/session/open',
      handler: (request) => {
        const { session, expires, name, role } = access.openSession(
          bearer(request),
          param(request, 'code') ?? '',
        );
        return ok({ session, expires, operator: name, role });
      },
    },
    {
      /** Ends the session sent. */
      path: '/admin/session/close',
      handler: (request) => ok({ closed: access.closeSession(request) }),
    },
    {
      path: '/admin/operators/list',
      handler: () =>
        ok({
          operators: access.list().map((r) => ({
            name: r.name,
            role: r.role,
            secondFactor: r.totpSecret !== null,
            created: r.created,
          })),
        }),
    },
    {
      /** name, role, [replace=true]: the token (and TOTP secret) shown once. */
      path: '/admin/operators/add',
      handler: (request) => {
        const name = param(request, 'name') ?? '';
        const role = readChoice('role', paramText(request, 'role'), ROLES);
        const replace =
          readChoice('replace', paramText(request, 'replace') ?? 'false', ['true', 'false']) === 'true';
        const { token, totpSecret, otpauth } = access.add(name, role, replace);
        return ok({
          operator: name,
          role,
          token,
          ...(SECOND_FACTOR_ROLES.has(role) && { totpSecret, otpauth }),
        });
      },
    },
    {
      /** name: removed, its sessions ended. */
      path: '/admin/operators/remove',
      handler: (request) => {
        const name = param(request, 'name') ?? '';
        if (name === '') fail('INVALID_PARAMETER', 'name is required: the operator to remove');
        access.remove(name);
        return ok({ operator: name, removed: true });
      },
    },
  ];
}
