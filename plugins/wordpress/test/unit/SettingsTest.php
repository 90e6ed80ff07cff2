<?php
/**
 * The options' sanitisers and defaults.
 *
 * @package StrataAnalytics
 */

use PHPUnit\Framework\TestCase;

final class SettingsTest extends TestCase {

	protected function setUp(): void {
		WP_Stubs::reset();
	}

	/** @dataProvider keys */
	public function test_sanitize_api_key( $input, $want, $errors ) {
		WP_Stubs::$options[ Strata_Analytics_Settings::API_KEY ] = 'st_test_PREVIOUSpreviousPREVIOUSprevio';
		$this->assertSame( $want, Strata_Analytics_Settings::sanitize_api_key( $input ) );
		$this->assertCount( $errors, WP_Stubs::$errors );
	}

	public function keys() {
		$previous = 'st_test_PREVIOUSpreviousPREVIOUSprevio';
		return array(
			'a live key'                  => array( WP_Stubs::KEY, WP_Stubs::KEY, 0 ),
			'a test key'                  => array( 'st_test_0123456789ABCDEFGHIJabcdefghij01', 'st_test_0123456789ABCDEFGHIJabcdefghij01', 0 ),
			'pasted with spaces'          => array( "  \t" . WP_Stubs::KEY . " \n", WP_Stubs::KEY, 0 ),
			'pasted with quotes'          => array( '"' . WP_Stubs::KEY . '"', WP_Stubs::KEY, 0 ),
			'markup stripped'             => array( '<b>' . WP_Stubs::KEY . '</b>', $previous, 1 ),
			'empty turns the plugin off'  => array( '', '', 0 ),
			'blank'                       => array( '   ', '', 0 ),
			'too short'                   => array( 'st_live_abc', $previous, 1 ),
			'too long'                    => array( WP_Stubs::KEY . 'x', $previous, 1 ),
			'a query token'               => array( 'st_tok_0123456789ABCDEFGHIJabcdefghij0123456789', $previous, 1 ),
			'not a string'                => array( array( WP_Stubs::KEY ), $previous, 0 ),
			'null'                        => array( null, $previous, 0 ),
		);
	}

	/** @dataProvider hosts */
	public function test_sanitize_host( $input, $want, $errors ) {
		WP_Stubs::$options[ Strata_Analytics_Settings::HOST ] = 'https://previous.example.com';
		$this->assertSame( $want, Strata_Analytics_Settings::sanitize_host( $input ) );
		$this->assertCount( $errors, WP_Stubs::$errors );
	}

	public function hosts() {
		$previous = 'https://previous.example.com';
		return array(
			'https'                    => array( 'https://analytics.example.com', 'https://analytics.example.com', 0 ),
			'trailing slash'           => array( 'https://analytics.example.com/', 'https://analytics.example.com', 0 ),
			'port and path'            => array( 'http://127.0.0.1:8080/strata/', 'http://127.0.0.1:8080/strata', 0 ),
			'upper-case scheme, host'  => array( 'HTTPS://Analytics.Example.COM', 'https://analytics.example.com', 0 ),
			'query and fragment drop'  => array( 'https://a.example.com/x?y=1#z', 'https://a.example.com/x', 0 ),
			'a bare host gets https'   => array( 'analytics.example.com', 'https://analytics.example.com', 0 ),
			'IPv6 literal'             => array( 'http://[::1]:8080', 'http://[::1]:8080', 0 ),
			'spaces'                   => array( '  https://a.example.com  ', 'https://a.example.com', 0 ),
			'empty'                    => array( '', '', 0 ),
			'javascript'               => array( 'javascript://alert(1)', $previous, 1 ),
			'ftp'                      => array( 'ftp://files.example.com', $previous, 1 ),
			'credentials'              => array( 'https://user:pw@a.example.com', $previous, 1 ),
			'markup in the host'       => array( 'https://a"><script>.example.com', $previous, 1 ),
			'no host'                  => array( 'https://', $previous, 1 ),
			'not a string'             => array( 42, $previous, 0 ),
		);
	}

	/** An unticked box is not posted: null must store '0', not the default. */
	public function test_sanitize_track_bots() {
		foreach ( array( '1', 1, true, 'on' ) as $on ) {
			$this->assertSame( '1', Strata_Analytics_Settings::sanitize_track_bots( $on ) );
		}
		foreach ( array( null, '', '0', 0, false, 'off', 'yes please', array( '1' ) ) as $off ) {
			$this->assertSame( '0', Strata_Analytics_Settings::sanitize_track_bots( $off ) );
		}
	}

	/** Bots are tracked when the option is missing, and until it is '0'. */
	public function test_track_bots_defaults_on() {
		$this->assertTrue( Strata_Analytics_Settings::track_bots() );
		WP_Stubs::$options[ Strata_Analytics_Settings::TRACK_BOTS ] = '1';
		$this->assertTrue( Strata_Analytics_Settings::track_bots() );
		WP_Stubs::$options[ Strata_Analytics_Settings::TRACK_BOTS ] = '0';
		$this->assertFalse( Strata_Analytics_Settings::track_bots() );
	}

	/** Nothing is configured until both key and URL are. */
	public function test_configured() {
		$this->assertFalse( Strata_Analytics_Settings::configured() );
		WP_Stubs::$options[ Strata_Analytics_Settings::API_KEY ] = WP_Stubs::KEY;
		$this->assertFalse( Strata_Analytics_Settings::configured() );
		WP_Stubs::$options[ Strata_Analytics_Settings::HOST ] = 'https://a.example.com';
		$this->assertTrue( Strata_Analytics_Settings::configured() );
	}

	/** uninstall.php deletes every option the plugin stores. */
	public function test_option_names() {
		$this->assertSame(
			array( 'strata_analytics_api_key', 'strata_analytics_host', 'strata_analytics_track_bots' ),
			Strata_Analytics_Settings::option_names()
		);
	}
}
