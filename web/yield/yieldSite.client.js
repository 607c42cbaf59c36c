// Yield site behaviour, inlined by renderYieldSite.ts under the page's CSP nonce. Plain browser
// JavaScript: connect the visitor's EIP-1193 wallet (window.ethereum), show their position, and
// deposit or withdraw by asking the wallet to send the ERC-20 approve and ERC-4626 deposit/withdraw.
// The page itself never calls a node: every read and write goes through the wallet.
(function yieldSite() {
  'use strict';

  var SELECTORS = {
    approve: '095ea7b3', // approve(address,uint256)
    allowance: 'dd62ed3e', // allowance(address,address)
    balanceOf: '70a08231', // balanceOf(address)
    deposit: '6e553f65', // deposit(uint256,address)
    withdraw: 'b460af94', // withdraw(uint256,address,address)
    maxWithdraw: 'ce96cb77', // maxWithdraw(address)
    totalAssets: '01e1d114', // totalAssets()
  };
  var RECEIPT_POLL_MS = 500;

  var data = JSON.parse(document.getElementById('site-data').textContent);
  var provider = window.ethereum;
  var account = null;
  var connectButton = document.getElementById('connect');
  var walletStatus = document.getElementById('wallet-status');

  function word(hex) {
    return hex.padStart(64, '0');
  }
  function encodeAddress(address) {
    return word(address.slice(2).toLowerCase());
  }
  function encodeUint(value) {
    return word(value.toString(16));
  }
  function calldata(selector, words) {
    return '0x' + selector + words.join('');
  }

  /** "12.5" → 12500000000000000000n for 18 decimals; null for anything that is not a positive amount. */
  function parseAmount(text, decimals) {
    var match = /^\s*(\d+)(?:\.(\d+))?\s*$/.exec(text);
    if (!match) return null;
    var fraction = match[2] || '';
    if (fraction.length > decimals) return null;
    var units = BigInt(match[1] + fraction.padEnd(decimals, '0'));
    return units > 0n ? units : null;
  }
  function formatAmount(units, decimals, places) {
    var text = units.toString().padStart(decimals + 1, '0');
    var whole = text.slice(0, text.length - decimals).replace(/\B(?=(\d{3})+$)/g, ',');
    var fraction = text
      .slice(text.length - decimals)
      .padEnd(places, '0')
      .slice(0, places);
    return whole + '.' + fraction;
  }

  function request(method, params) {
    return provider.request({ method: method, params: params || [] });
  }
  function call(to, input) {
    return request('eth_call', [{ to: to, data: input }, 'latest']).then(function (result) {
      return BigInt(result === '0x' ? '0x0' : result);
    });
  }
  function sleep(ms) {
    return new Promise(function (resolve) {
      setTimeout(resolve, ms);
    });
  }
  async function send(to, input) {
    var hash = await request('eth_sendTransaction', [{ from: account, to: to, data: input }]);
    for (;;) {
      var receipt = await request('eth_getTransactionReceipt', [hash]);
      if (receipt) {
        if (receipt.status !== '0x1') throw new Error('The transaction reverted (' + hash + ')');
        return receipt;
      }
      await sleep(RECEIPT_POLL_MS);
    }
  }
  async function ensureChain() {
    var wanted = '0x' + data.chainId.toString(16);
    var current = await request('eth_chainId');
    if (parseInt(current, 16) === data.chainId) return;
    await request('wallet_switchEthereumChain', [{ chainId: wanted }]);
  }

  function vaultElements(vault) {
    var root = document.querySelector('[data-vault="' + vault.address + '"]');
    return {
      root: root,
      position: root.querySelector('[data-position]'),
      total: root.querySelector('[data-total-assets]'),
      message: root.querySelector('[data-message]'),
      deposit: root.querySelector('[data-action="deposit"]'),
      withdraw: root.querySelector('[data-action="withdraw"]'),
      max: root.querySelector('[data-max]'),
    };
  }
  function say(elements, text, isError) {
    elements.message.textContent = text;
    elements.message.classList.toggle('error', Boolean(isError));
  }

  async function refresh(vault) {
    var elements = vaultElements(vault);
    var total = await call(vault.address, calldata(SELECTORS.totalAssets, []));
    elements.total.textContent = formatAmount(total, vault.decimals, 2) + ' ' + vault.symbol;
    if (!account) return;
    var position = await call(vault.address, calldata(SELECTORS.maxWithdraw, [encodeAddress(account)]));
    elements.position.textContent = formatAmount(position, vault.decimals, 6) + ' ' + vault.symbol;
    elements.position.setAttribute('data-units', position.toString());
  }

  async function deposit(vault, amount) {
    var elements = vaultElements(vault);
    await ensureChain();
    var allowance = await call(
      vault.asset,
      calldata(SELECTORS.allowance, [encodeAddress(account), encodeAddress(vault.address)]),
    );
    if (allowance < amount) {
      say(elements, 'Approve ' + vault.symbol + ' in your wallet…');
      await send(
        vault.asset,
        calldata(SELECTORS.approve, [encodeAddress(vault.address), encodeUint(amount)]),
      );
    }
    say(elements, 'Confirm the deposit in your wallet…');
    await send(vault.address, calldata(SELECTORS.deposit, [encodeUint(amount), encodeAddress(account)]));
    say(elements, 'Deposited ' + formatAmount(amount, vault.decimals, 6) + ' ' + vault.symbol + '.');
  }

  async function withdraw(vault, amount) {
    var elements = vaultElements(vault);
    await ensureChain();
    say(elements, 'Confirm the withdrawal in your wallet…');
    await send(
      vault.address,
      calldata(SELECTORS.withdraw, [encodeUint(amount), encodeAddress(account), encodeAddress(account)]),
    );
    say(elements, 'Withdrew ' + formatAmount(amount, vault.decimals, 6) + ' ' + vault.symbol + '.');
  }

  function bind(vault) {
    var elements = vaultElements(vault);
    var forms = [
      [elements.deposit, deposit],
      [elements.withdraw, withdraw],
    ];
    forms.forEach(function (pair) {
      var form = pair[0];
      var act = pair[1];
      if (!form) return;
      form.addEventListener('submit', async function (event) {
        event.preventDefault();
        if (!account) return say(elements, 'Connect a wallet first.', true);
        var amount = parseAmount(form.elements.amount.value, vault.decimals);
        if (amount === null)
          return say(elements, 'Enter a positive amount (at most ' + vault.decimals + ' decimals).', true);
        var button = form.querySelector('button[type="submit"]');
        button.disabled = true;
        try {
          await act(vault, amount);
          form.elements.amount.value = '';
        } catch (error) {
          say(elements, (error && error.message) || String(error), true);
        } finally {
          button.disabled = false;
          await refresh(vault).catch(function () {});
        }
      });
    });
    elements.max.addEventListener('click', function () {
      var units = elements.position.getAttribute('data-units');
      if (units)
        elements.withdraw.elements.amount.value = formatAmount(BigInt(units), vault.decimals, vault.decimals);
    });
  }

  async function connect() {
    try {
      var accounts = await request('eth_requestAccounts');
      account = accounts[0] || null;
      if (!account) throw new Error('The wallet shared no account');
      await ensureChain();
      walletStatus.textContent = 'Connected: ' + account;
      connectButton.hidden = true;
      await Promise.all(data.vaults.map(refresh));
    } catch (error) {
      walletStatus.textContent = 'Could not connect: ' + ((error && error.message) || String(error));
    }
  }

  data.vaults.forEach(bind);
  if (!provider) {
    connectButton.disabled = true;
    walletStatus.textContent =
      'No wallet found: open this page in a browser with an Ethereum wallet to deposit or withdraw.';
  } else {
    connectButton.addEventListener('click', connect);
  }
})();
